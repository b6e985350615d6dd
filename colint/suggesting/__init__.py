"""``colint suggest``: the variants of a design that pass every rule (``search``), the grid of file edits
around a design (``axes``) and the interpolated search model that orders them (``model``)."""
