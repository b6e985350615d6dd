"""Weights as a witness: what a checkpoint folder's safetensors say about the model, read without tensor data.

Beside a ``config.json`` (or ``params.json``) that lies in a checkpoint folder, ``model.safetensors.index.json``
gives ``metadata.total_size`` (bytes) and every tensor's name (``weight_map``); each ``*.safetensors`` file begins
with an 8-byte little-endian length and a JSON header of that length naming each tensor's dtype and shape. Only the
index and those headers are read (each header bounded by :data:`MAX_HEADER_BYTES`), never tensor data. From the
names and shapes: the decoder layers (``model.layers.N.``), multi-token-prediction layers, the routed experts per
layer, the embedding's rows, the parameter count and the elements per dtype. A folder without safetensors, or a
header that cannot be read, gives what it can (``problems`` says what was left out); ``weights_witness`` memoizes
one witness per folder and modification times.

Packed 4-bit weights (``U8``: NVFP4, MXFP4 blocks) hold two parameters a byte; scale tensors (``*_scale``,
``*_scale_inv``, ``*_scales``, ``*_scale_2``) are formats, not parameters.
"""

from __future__ import annotations

import functools
import json
import os
import re
import struct
from typing import Optional

from colint.loading.witness import INDEX_NAME, WeightsWitness, checkpoint_files

# safetensors refuses headers over 100,000,000 bytes (safetensors/src/tensor.rs, MAX_HEADER_SIZE)
MAX_HEADER_BYTES = 100_000_000
MAX_INDEX_BYTES = 64 * 1024 * 1024  # a 1,000-shard index of 100,000 tensors is ~10 MB
MAX_FILES = 4096  # shards read at most (the largest published checkpoints have a few hundred)

# the decoder stack's layers, whatever the wrapper: model.layers.N., transformer.h.N., backbone.layers.N.,
# model.language_model.layers.N., language_model.model.layers.N.
_LAYER = re.compile(
    r"^(?:model\.|transformer\.|backbone\.|language_model\.|model\.language_model\.|language_model\.model\.|"
    r"model\.decoder\.)?(?:layers|h|blocks)\.(\d+)\."
)
_MTP = re.compile(r"(?:^|\.)mtp(?:_layers|\.layers)?\.(\d+)\.")
_EXPERT = re.compile(r"(?:layers|h|blocks)\.(\d+)\..*\.experts\.(\d+)\.")
_FUSED_EXPERTS = re.compile(r"(?:layers|h|blocks)\.(\d+)\..*\.experts\.(?:gate_up_proj|down_proj|w1|w2|w3|w13)[^.]*$")
_SCALE = re.compile(r"(_scale|_scale_inv|_scales|_scale_2|\.scales|_amax|\.absmax|_zero_point)$")
_EMBEDDING = (
    "model.embed_tokens.weight",
    "model.language_model.embed_tokens.weight",
    "language_model.model.embed_tokens.weight",
    "transformer.wte.weight",
    "transformer.word_embeddings.weight",
    "backbone.embeddings.weight",
    "backbone.embedding.weight",
    "tok_embeddings.weight",
    "embed_tokens.weight",
)
_PACKED = {"U8": 2, "I8": 1}  # parameters per element of a non-scale integer weight (packed 4-bit in U8)


def weights_witness(config_path: str) -> Optional[WeightsWitness]:
    """The witness of the checkpoint folder ``config_path`` lies in, or None when it lies in none."""
    found = checkpoint_files(config_path)
    return None if found is None else witness_of(*found)


def witness_of(directory: str, stamp: tuple) -> WeightsWitness:
    """The witness of checkpoint folder ``directory`` whose files are ``stamp`` (colint.loading.witness
    .checkpoint_files): read once per state of those files."""
    return _witness(directory, stamp)


@functools.lru_cache(maxsize=16)
def _witness(directory: str, stamp: tuple) -> WeightsWitness:
    problems: list[str] = []
    total_size = None
    names: list[str] = []
    files: list[str] = []
    index_path = os.path.join(directory, INDEX_NAME)
    if os.path.isfile(index_path):
        index = _read_index(index_path, problems)
        meta = index.get("metadata")
        size = meta.get("total_size") if isinstance(meta, dict) else None
        total_size = size if isinstance(size, int) and not isinstance(size, bool) else None
        wmap = index.get("weight_map")
        if not isinstance(wmap, dict):
            wmap = {}
        names = [n for n in wmap if isinstance(n, str)]
        files = sorted({f for f in wmap.values() if isinstance(f, str) and "/" not in f and f.endswith(".safetensors")})
    else:
        files = sorted(n for n, *_ in stamp if n.endswith(".safetensors"))
    if len(files) > MAX_FILES:
        problems.append(f"{len(files):,} shards: only the first {MAX_FILES:,} headers read")
        files = files[:MAX_FILES]
    shapes: dict[str, tuple[str, list[int]]] = {}
    read = 0
    for f in files:
        header = _read_header(os.path.join(directory, f), problems)
        if header is None:
            continue
        read += 1
        for name, entry in header.items():
            if name == "__metadata__" or not isinstance(entry, dict):
                continue
            dtype, shape = entry.get("dtype"), entry.get("shape")
            if isinstance(dtype, str) and isinstance(shape, list) and all(isinstance(d, int) for d in shape):
                shapes[name] = (dtype, shape)
    all_names = list(dict.fromkeys(names + list(shapes)))
    complete = read == len(files) and bool(files) and all(n in shapes for n in all_names)
    return _summarize(directory, read, total_size, all_names, shapes, complete, problems)


def _summarize(
    directory: str,
    read: int,
    total_size: Optional[int],
    names: list[str],
    shapes: dict[str, tuple[str, list[int]]],
    complete: bool,
    problems: list[str],
) -> WeightsWitness:
    layers: set[int] = set()
    mtp: set[int] = set()
    experts: dict[int, set[int]] = {}
    fused: dict[int, int] = {}
    for n in names:
        if (m := _MTP.search(n)) is not None:
            mtp.add(int(m.group(1)))
            continue
        if (m := _LAYER.match(n)) is not None:
            layers.add(int(m.group(1)))
        if (m := _EXPERT.search(n)) is not None:
            experts.setdefault(int(m.group(1)), set()).add(int(m.group(2)))
        elif (m := _FUSED_EXPERTS.search(n)) is not None and n in shapes and len(shapes[n][1]) == 3:
            fused[int(m.group(1))] = max(fused.get(int(m.group(1)), 0), shapes[n][1][0])
    dtype_params: dict[str, int] = {}
    scale_dtypes: set[str] = set()
    params = 0
    block = False
    for n, (dtype, shape) in shapes.items():
        elements = 1
        for d in shape:
            elements *= d
        if _SCALE.search(n.removesuffix(".weight")):  # (".weight_scale" and ".input_scale" end in _scale)
            scale_dtypes.add(dtype)
            block = block or n.endswith("_scale_inv")
            continue
        count = elements * _PACKED.get(dtype, 1)
        dtype_params[dtype] = dtype_params.get(dtype, 0) + count
        params += count
    emb = next((e for e in _EMBEDDING if e in shapes), None)
    n_experts = max([len(s) for s in experts.values()] + list(fused.values()) + [0])
    return WeightsWitness(
        directory=directory,
        files_read=read,
        total_size_bytes=total_size,
        tensors=len(names),
        params=params if complete else None,
        dtype_params=dtype_params,
        scale_dtypes=sorted(scale_dtypes),
        block_scales=block,
        layers=sorted(layers),
        mtp_layers=len(mtp),
        experts=n_experts,
        embedding_rows=shapes[emb][1][0] if emb is not None and shapes[emb][1] else None,
        embedding_name=emb,
        problems=problems,
    )


def _read_index(path: str, problems: list[str]) -> dict:
    try:
        if os.path.getsize(path) > MAX_INDEX_BYTES:
            problems.append(f"{INDEX_NAME} is over {MAX_INDEX_BYTES:,} bytes: not read")
            return {}
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        problems.append(f"{INDEX_NAME} could not be read ({type(exc).__name__})")
        return {}
    return data if isinstance(data, dict) else {}


def _read_header(path: str, problems: list[str]) -> Optional[dict]:
    """The JSON header of one safetensors file (its first 8 + n bytes only), or None (a problem noted)."""
    name = os.path.basename(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                problems.append(f"{name}: shorter than a safetensors header")
                return None
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER_BYTES:
                problems.append(f"{name}: header of {n:,} bytes, over the {MAX_HEADER_BYTES:,}-byte limit")
                return None
            raw = fh.read(n)
    except OSError as exc:
        problems.append(f"{name}: {exc.strerror or type(exc).__name__}")
        return None
    if len(raw) < n:
        problems.append(f"{name}: header cut short ({len(raw):,} of {n:,} bytes)")
        return None
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        problems.append(f"{name}: header is not JSON")
        return None
    return header if isinstance(header, dict) else None
