"""The command line: the ``colint`` group and ``main`` (``main``), one click option per setting
(``options``), one-line errors and exit codes (``output``), ``colint check`` (``check``), the model-design
commands (``design``) and the reference commands (``reference``)."""
