"""Fixes as text: a finding's fix resolved to edits of the original file (``fix_text``) and the in-memory
Document of an edited YAML file (``edited_document``)."""
