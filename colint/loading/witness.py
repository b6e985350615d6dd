"""What a checkpoint's weights say about its model, as data (colint.loading.weights reads it from the safetensors index
and headers beside a config): kept apart from the reader so that a check of a config outside a checkpoint folder
never imports the reader (start-up), and so that ModelSpec can carry it."""

from __future__ import annotations

import os
from dataclasses import field
from typing import Optional

from colint.util.records import dataclass

INDEX_NAME = "model.safetensors.index.json"
CONFIG_NAMES = ("config.json", "params.json")


@dataclass(frozen=True, kw_only=True, slots=True)
class WeightsWitness:
    """What a checkpoint's weights say about its model (module docstring)."""

    directory: str
    files_read: int  # safetensors headers read
    total_size_bytes: Optional[int] = None  # the index's metadata.total_size
    tensors: int = 0
    params: Optional[int] = None  # None: not every header could be read (shapes unknown)
    dtype_params: dict[str, int] = field(default_factory=dict)  # parameters per stored dtype (scales excluded)
    scale_dtypes: list[str] = field(default_factory=list)  # dtypes of the scale tensors (F32, F8_E4M3, U8 ...)
    block_scales: bool = False  # *_scale_inv tensors: FP8 with block scales (DeepSeek-V3's 128 x 128)
    layers: list[int] = field(default_factory=list)  # the decoder layer indices found, sorted
    mtp_layers: int = 0  # layers under an mtp prefix (mtp.layers.N, model.mtp_layers.N)
    experts: int = 0  # routed experts of the layer that has the most (0: none found)
    embedding_rows: Optional[int] = None  # rows of the token embedding (its header shape)
    embedding_name: Optional[str] = None
    problems: list[str] = field(default_factory=list)


def checkpoint_files(config_path: str) -> Optional[tuple[str, tuple]]:
    """(the folder of ``config_path``, its index and ``.safetensors`` files as sorted (name, mtime_ns, size)) when
    it is a checkpoint's config beside safetensors, else None: one listing of the folder, whose result also keys
    the witness's cache (colint.loading.weights.witness_of)."""
    if os.path.basename(config_path) not in CONFIG_NAMES:
        return None
    directory = os.path.dirname(os.path.abspath(config_path))
    try:
        stamp = tuple(
            (e.name, st.st_mtime_ns, st.st_size)
            for e in sorted(os.scandir(directory), key=lambda e: e.name)
            if (e.name == INDEX_NAME or e.name.endswith(".safetensors")) and (st := e.stat())
        )
    except OSError:
        return None
    return (directory, stamp) if stamp else None


HF_QUANT_NAME = (
    "hf_quant_config.json"  # NVIDIA ModelOpt's export beside config.json (TensorRT-LLM, vLLM, SGLang read it)
)
MAX_QUANT_BYTES = 1 << 20  # an hf_quant_config.json is a few hundred bytes: a larger file is not one (ignored)


def modelopt_quantization(config_path: str) -> Optional[dict]:
    """The ``quantization`` table of the ModelOpt ``hf_quant_config.json`` beside ``config_path`` (``quant_algo``
    FP8 / NVFP4 / W4A8_AWQ ..., ``kv_cache_quant_algo``, ``group_size``), or None: no such file beside a
    ``config.json``, or one that is not a JSON object with that table (then the config alone decides)."""
    import json

    if os.path.basename(config_path) != "config.json":
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(config_path)), HF_QUANT_NAME)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_QUANT_BYTES + 1)
        data = json.loads(raw) if len(raw) <= MAX_QUANT_BYTES else None
    except (OSError, ValueError):
        return None
    table = data.get("quantization") if isinstance(data, dict) else None
    return table if isinstance(table, dict) and table.get("quant_algo") else None
