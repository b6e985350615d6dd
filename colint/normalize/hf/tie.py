"""``tie_word_embeddings`` of an HF config, including multimodal wrappers: the one place that decides it.

transformers 5.24 ties the LM head of ``*ForConditionalGeneration`` by the config of the model that
owns the head: ``PreTrainedModel.get_expanded_tied_weights_keys`` reads ``self.config.tie_word_embeddings``,
and for a wrapper ``self.config`` is the wrapper's (outer) config. So the outer key governs, with the
outer class's default when absent (gemma3/gemma4/mistral3/internvl/kimi_k25/lfm2_vl/paligemma: true), and
the text config's key is ignored — except that a few classes copy a text-config ``true`` up when the
outer value is false (pre-v5 saves kept it there: ``configuration_llava.py``, ``configuration_qwen2_vl.py``,
``configuration_glm4v_moe.py``, ...), and Llama 4, whose language model is a whole
``Llama4ForCausalLM(config.text_config)`` with its own head, where only the text config's key counts.
Qwen-Omni's thinker (``thinker_config.text_config``) is tied by ``thinker_config.tie_word_embeddings``.

Every row below was checked by building the wrapper on the meta device with the outer key, the inner
key, both (disagreeing) and neither, and testing ``lm_head.weight is embed_tokens.weight``.
A wrapper that is not in the table (remote code, a newer class) follows the same convention: the outer
key if stated, else the text config's, else the text family's default.
"""

from __future__ import annotations

from colint.errors import SpecError
from colint.loading.document import format_path
from colint.normalize.model_spec import Source

# top-level model_type -> (outer class default, copies a text-config ``true`` up, the text config governs)
WRAPPER_TIE: dict[str, tuple[bool, bool, bool]] = {
    "llava": (False, True, False),
    "llava_onevision": (False, True, False),
    "qwen2_vl": (False, True, False),
    "qwen2_5_vl": (False, True, False),
    "glm4v": (False, True, False),
    "glm4v_moe": (False, True, False),
    "llava_next": (False, False, False),
    "qwen3_vl": (False, False, False),
    "qwen3_vl_moe": (False, False, False),
    "qwen3_5": (False, False, False),
    "qwen3_5_moe": (False, False, False),
    "smolvlm": (False, False, False),
    "qwen3_omni_moe": (False, False, False),  # thinker_config.tie_word_embeddings
    "qwen2_5_omni": (False, False, False),  # thinker_config.tie_word_embeddings
    "gemma3": (True, False, False),
    "gemma4": (True, False, False),
    "paligemma": (True, False, False),
    "mistral3": (True, False, False),
    "internvl": (True, False, False),
    "kimi_k25": (True, False, False),
    "lfm2_vl": (True, False, False),
    "llama4": (False, False, True),
}

KEY = "tie_word_embeddings"


def tie_embeddings(r, default: bool | None = None, *aliases: str) -> bool:
    """Whether the LM head is tied to the input embedding, as transformers builds it.

    ``r`` reads the language model (its ``prefix`` is the text config inside a wrapper); ``default`` is
    the text family's default (None: the family's defaults table, else untied) and ``aliases`` further keys
    of the text config (LFM2's ``tie_embedding``).
    Records ``sources["tie_word_embeddings"]`` at the key that decided (none when a default did)."""
    if default is None:
        default = r.defaults.get(KEY, False)
    if not r.prefix:
        return r.bool(KEY, KEY, *aliases, default=default)
    outer_path = r.prefix[:-1] + (KEY,)
    top_type = r.doc.get(("model_type",))
    row = WRAPPER_TIE.get(top_type) if isinstance(top_type, str) else None
    inner_stated = r.first_present((KEY,) + aliases) is not None
    outer_stated = r.doc.has(outer_path) and r.doc.get(outer_path) is not None
    if row is None:  # unknown wrapper: the outer key, else the text config's, else the family default
        if outer_stated:
            return _outer(r, outer_path)
        return r.bool(KEY, KEY, *aliases, default=default)
    outer_default, copies_inner_true, inner_governs = row
    if inner_governs:
        return r.bool(KEY, KEY, *aliases, default=default)
    inner = r.bool(None, KEY, *aliases) if inner_stated else None  # validated even where ignored
    if outer_stated:
        v = _outer(r, outer_path)
    else:
        v = outer_default
    if not v and copies_inner_true and inner is True:
        r.record(KEY, r.first_present((KEY,) + aliases))
        return True
    return v


def _outer(r, path: tuple) -> bool:
    v = r.doc.get(path)
    line, col = r.doc.location(path)
    if not isinstance(v, bool):
        raise SpecError(
            f"'{format_path(path)}' must be true or false, got {v!r}",
            path=r.doc.path,
            line=line,
            column=col,
            key=format_path(path),
        )
    r.sources[KEY] = Source(key=format_path(path), line=line, column=col)
    return v
