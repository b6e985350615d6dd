"""Pieces shared by the MoE and hybrid Hugging Face adapters.

Defaults here and in the family modules are transformers 5.24's (``configuration_<family>.py``):
the family modules pass them explicitly, so a key missing from the file is read the way
transformers would fill it even when no generated defaults table is installed.
"""

from __future__ import annotations

from colint.normalize.format_reader import group_limited_routing
from colint.normalize.format_reader import layer  # noqa: F401  (the adapters import it from here)
from colint.normalize.hf.base import HFReader
from colint.normalize.model_spec import KeyIssue, LayerKind
from colint.normalize.weights import kind_params


class KindTable:
    """Collects one LayerKind per distinct build and the per-layer pattern."""

    def __init__(self) -> None:
        self.kinds: list[LayerKind] = []
        self.pattern: list[int] = []
        self._index: dict[LayerKind, int] = {}
        # id(kind) -> (kind, index): a kind added again as the same object (format_reader.layer returns one
        # object per mixer, FFN and size) is found without hashing its ~40 fields; the kind held keeps its id
        self._by_id: dict[int, tuple[LayerKind, int]] = {}

    def add(self, kind: LayerKind) -> None:
        hit = self._by_id.get(id(kind))
        if hit is not None and hit[0] is kind:
            self.pattern.append(hit[1])
            return
        idx = self._index.get(kind)
        if idx is None:
            idx = self._index[kind] = len(self.kinds)
            self.kinds.append(kind)
        self._by_id[id(kind)] = (kind, idx)
        self.pattern.append(idx)


def int_list(r: HFReader, key: str, num_layers: int | None = None) -> list[int] | None:
    """A list of layer indices (``mlp_only_layers``, ``moe_layers``)."""
    v = r.list(None, key)
    if v is None:
        return None
    for i, x in enumerate(v):
        if isinstance(x, bool) or not isinstance(x, int):
            raise r.error((key, i), f"'{r.key_name(key)}[{i}]' must be a layer index (integer)")
    return list(v)


def str_list(r: HFReader, key: str) -> list[str] | None:
    v = r.list(None, key)
    if v is None:
        return None
    for i, x in enumerate(v):
        if not isinstance(x, str):
            raise r.error((key, i), f"'{r.key_name(key)}[{i}]' must be a string")
    return list(v)


# model_types whose transformers router picks a token's experts within its top ``topk_group`` of ``n_group`` expert
# groups (modeling_<family>.py: ``group_idx = torch.topk(group_scores, k=self.topk_group)``, transformers 5.24);
# DeepSeek-V2 only with topk_method "group_limited_greedy" (deepseek.py)
GROUP_LIMITED_ROUTERS = frozenset(
    {
        "deepseek_v3",
        "deepseek_v32",
        "glm_moe_dsa",
        "kimi_k2",
        "kimi_k25",
        "glm4_moe",
        "glm4v_moe",
        "glm4v_moe_text",
        "glm4_moe_lite",
        "dots1",
        "nemotron_h",
        "mimo_v2_flash",
    }
)


def router_groups(r: HFReader, num_experts: int, top_k: int, defaults: dict) -> dict[str, int]:
    """FFN fields of a group-limited router (``n_group`` expert groups, a token's picks within its ``topk_group``
    best), where the limit binds (format_reader.group_limited_routing)."""
    groups = r.int("expert_groups", "n_group", default=defaults.get("n_group") or 1)
    per_token = r.int("groups_per_token", "topk_group", default=defaults.get("topk_group") or groups)
    return group_limited_routing(r, num_experts, top_k, groups, per_token, ("n_group", "topk_group"))


def mtp_module_params(layer_params: int, h: int) -> int:
    """Parameters of one DeepSeek-V3 style multi-token-prediction module, which transformers
    does not build: its decoder layer(s) (``layer_params``) plus enorm and hnorm (H each), eh_proj
    (2H -> H, no bias) and the shared head's final norm (H). The embedding and LM head are shared
    with the main model and not counted (DeepSeek-V3 technical report, §2.2; the checkpoint's layer 61)."""
    return layer_params + 2 * h + 2 * h * h + h


def deepseek_style_mtp_params(kind: LayerKind, h: int) -> int:
    """:func:`mtp_module_params` of an MTP module whose decoder layer is ``kind``."""
    return mtp_module_params(kind_params(kind, h)[0], h)


def nullable_int(r: HFReader, field: str | None, key: str, default: int | None) -> int | None:
    """An optional size whose explicit ``null`` disables it (``sliding_window``,
    ``attention_chunk_size``, MLA's ``q_lora_rank``) but whose absence means the family default."""
    if r.doc.has(r.path(key)) and r.doc.get(r.path(key)) is None:
        if field:
            r.record(field, key)
        return None
    if default is None and not r.has(key):
        return None
    return r.int(field, key, default=default)


def ignored_key(r: HFReader, key: str, detail: str):
    """A KeyIssue for a key in the file that transformers' modelling code does not use (CL007)."""
    return KeyIssue(kind="ignored", source=r.located(key), detail=detail)
