"""Small helpers every layer may use: plain data in and out, typed TOML tables, memos, atomic writes, globs,
worker processes. Nothing here imports the rest of colint."""
