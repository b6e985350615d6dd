"""The engine that checks: deployment settings, ``Settings`` and the config files that set them, suppression,
the files a run reads (``sources``, ``revisions``), the closure of advice and ``checking``, which runs the
stages per file. Its own order, lowest first: deployment, settings, config_files, then suppression, sources
and revisions, then closure, then checking."""
