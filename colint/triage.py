"""Is this file a decoder LLM's architecture, or something a model repository also holds?

A Hugging Face model repository has many ``config.json`` files that describe no decoder LLM:
sentence-transformers' ``1_Pooling/config.json``, every diffusers component (``unet/``, ``vae/``,
``scheduler/``), vision and speech models, tokenizer / generation / processor configs, PEFT
adapters. ``triage(doc)`` recognises them from their keys (never from the file name, which the
caller chose) and says what they are, so that ``colint check`` (and its pre-commit hook, whose
pattern matches every ``config.json``) skips them instead of failing with "format not recognized".

Two outcomes besides "lint it" (``None``):

- ``skip``: not a model architecture colint reads (pooling, diffusers, vision, tokenizer, ...).
  Shown only with ``--verbose``.
- ``out-of-scope``: a language model that is not a decoder — encoder-only (BERT family) or
  encoder-decoder (T5, BART, Whisper). Its GEMMs do not run as a decoder's prefill and decode,
  so pricing it as one would be wrong; it is reported as not checked, never as findings.

``--strict`` (or ``--input-format``) bypasses triage: every file goes to the adapters, as before.
A file whose ``model_type`` has a colint adapter is always linted.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from colint.errors import FormatNotRecognized
from colint.normalize import detect_format
from colint.normalize.hf import FAMILIES, WRAPPER_KEYS, WRAPPER_TEXT_TYPES
from colint.util.records import dataclass

# transformers model types of encoder-only language models (masked-LM / embedding backbones).
ENCODER_TYPES = frozenset(
    {
        "albert",
        "bert",
        "bert-generation",
        "big_bird",
        "camembert",
        "canine",
        "convbert",
        "data2vec-text",
        "deberta",
        "deberta-v2",
        "distilbert",
        "electra",
        "ernie",
        "ernie_m",
        "esm",
        "flaubert",
        "funnel",
        "hubert_text",
        "ibert",
        "jina_bert",
        "layoutlm",
        "layoutlmv2",
        "layoutlmv3",
        "lilt",
        "longformer",
        "luke",
        "markuplm",
        "megatron-bert",
        "mobilebert",
        "modernbert",
        "mpnet",
        "mra",
        "nezha",
        "nomic_bert",
        "nystromformer",
        "qdqbert",
        "realm",
        "rembert",
        "retribert",
        "roberta",
        "roberta-prelayernorm",
        "roc_bert",
        "roformer",
        "splinter",
        "squeezebert",
        "tapas",
        "xlm",
        "xlm-roberta",
        "xlm-roberta-xl",
        "xmod",
        "yoso",
        "neobert",
        "eurobert",
    }
)
# encoder-decoder language / speech models
ENCODER_DECODER_TYPES = frozenset(
    {
        "bart",
        "bigbird_pegasus",
        "blenderbot",
        "blenderbot-small",
        "encoder-decoder",
        "fsmt",
        "led",
        "longt5",
        "m2m_100",
        "marian",
        "mbart",
        "mt5",
        "mvp",
        "nllb-moe",
        "pegasus",
        "pegasus_x",
        "plbart",
        "prophetnet",
        "seamless_m4t",
        "speech-encoder-decoder",
        "speech_to_text",
        "switch_transformers",
        "t5",
        "t5gemma",
        "umt5",
        "whisper",
        "moonshine",
        "pix2struct",
        "nougat",
        "donut-swin",
        "vision-encoder-decoder",
    }
)
# vision, vision-language contrastive encoders and speech encoders: not language models colint reads
VISION_AUDIO_TYPES = frozenset(
    {
        "beit",
        "bit",
        "clip",
        "clip_text_model",
        "clip_vision_model",
        "clipseg",
        "conditional_detr",
        "convnext",
        "convnextv2",
        "cvt",
        "data2vec-audio",
        "data2vec-vision",
        "deformable_detr",
        "deit",
        "depth_anything",
        "detr",
        "dinov2",
        "dinov2_with_registers",
        "dinov3_vit",
        "dinov3_convnext",
        "dpt",
        "efficientnet",
        "encodec",
        "focalnet",
        "glpn",
        "groupvit",
        "hiera",
        "hubert",
        "imagegpt",
        "levit",
        "mask2former",
        "maskformer",
        "mobilenet_v1",
        "mobilenet_v2",
        "mobilevit",
        "mobilevitv2",
        "owlv2",
        "owlvit",
        "perceiver",
        "poolformer",
        "pvt",
        "pvt_v2",
        "regnet",
        "resnet",
        "rt_detr",
        "sam",
        "segformer",
        "seggpt",
        "siglip",
        "siglip_text_model",
        "siglip_vision_model",
        "siglip2",
        "siglip2_vision_model",
        "swin",
        "swin2sr",
        "swinv2",
        "table-transformer",
        "timesformer",
        "timm_wrapper",
        "upernet",
        "videomae",
        "vit",
        "vit_hybrid",
        "vit_mae",
        "vit_msn",
        "vitdet",
        "vitmatte",
        "vivit",
        "wav2vec2",
        "wav2vec2-bert",
        "wav2vec2-conformer",
        "wavlm",
        "yolos",
        "zoedepth",
        "unispeech",
        "unispeech-sat",
        "sew",
        "sew-d",
        "audio-spectrogram-transformer",
        "clap",
        "speecht5",
        "univnet",
    }
)
# architectures[] heads that only encoders carry (a decoder family's ForSequenceClassification head is a
# decoder: reward models are linted)
_ENCODER_HEADS = (
    "ForMaskedLM",
    "ForTokenClassification",
    "ForQuestionAnswering",
    "ForMultipleChoice",
    "ForNextSentencePrediction",
    "ForPreTraining",
)
_VISION_AUDIO_HEADS = (
    "ForImageClassification",
    "ForObjectDetection",
    "ForSemanticSegmentation",
    "ForDepthEstimation",
    "ForImageSegmentation",
    "ForMaskedImageModeling",
    "ForAudioClassification",
    "ForCTC",
    "ForAudioFrameClassification",
    "ForXVector",
    "ForUniversalSegmentation",
    "ForVideoClassification",
    "ForZeroShotImageClassification",
    "ForZeroShotObjectDetection",
)
_ENCODER_DECODER_HEADS = ("ForConditionalGeneration", "ForSpeechSeq2Seq")  # only with an encoder-decoder type

# Keys that carry a decoder's architecture in some format colint reads (HF, Megatron, MaxText, NeoX, OLMo,
# Meta params.json, colint's schema). A file with none of them, anywhere in its top level or a wrapper,
# describes no model colint could lint.
ARCHITECTURE_KEYS = frozenset(
    {
        "model_type",
        "architectures",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "n_layer",
        "n_layers",
        "n_embd",
        "n_head",
        "n_heads",
        "d_model",
        "num_layers",
        "dim",
        "emb_dim",
        "base_emb_dim",
        "ffn_hidden_size",
        "vocab_size",
        "padded_vocab_size",
        "text_config",
        "llm_config",
        "language_config",
        "thinker_config",
        "model",
        "decoder",
        "layers",
        "base_num_decoder_layers",
        "colint",
        "schema",
        "num-layers",
        "hidden-size",
    }
)
_GENERATION_KEYS = frozenset(
    {
        "_from_model_config",
        "do_sample",
        "temperature",
        "top_p",
        "top_k",
        "max_new_tokens",
        "max_length",
        "repetition_penalty",
        "num_beams",
        "min_length",
        "length_penalty",
        "no_repeat_ngram_size",
        "typical_p",
        "decoder_start_token_id",
        "forced_eos_token_id",
        "begin_suppress_tokens",
        "suppress_tokens",
    }
)
_TOKENIZER_KEYS = frozenset(
    {
        "tokenizer_class",
        "added_tokens_decoder",
        "model_max_length",
        "chat_template",
        "clean_up_tokenization_spaces",
        "add_bos_token",
        "add_eos_token",
        "tokenizer_file",
    }
)
_PROCESSOR_KEYS = frozenset(
    {
        "image_processor_type",
        "feature_extractor_type",
        "processor_class",
        "video_processor_type",
        "audio_processor_type",
    }
)


@dataclass(frozen=True)
class Triage:
    """Why a file is not linted. ``kind`` is ``skip`` (not a model architecture) or ``out-of-scope``
    (a model that is not a decoder LLM)."""

    kind: Literal["skip", "out-of-scope"]
    what: str  # "sentence-transformers pooling config", "encoder-only model (model_type 'bert')"

    def message(self) -> str:
        if self.kind == "out-of-scope":
            return f"not checked: {self.what}; colint lints decoder LLMs (--strict to check it anyway)"
        return f"skipped: {self.what}, not a decoder LLM architecture (--strict to check it anyway)"

    def public(self) -> dict:
        return {"kind": self.kind, "reason": self.what}


def _str_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _by_model(data: dict) -> Optional[Triage]:
    """What ``model_type`` / ``architectures`` say (None: a decoder family, or they say nothing)."""
    mt = data.get("model_type")
    archs = _str_list(data.get("architectures"))
    for wrapper in WRAPPER_KEYS:  # a vision-language model whose language model colint reads (BLIP-2's OPT)
        sub = data.get(wrapper)
        if isinstance(sub, dict) and sub.get("model_type") in FAMILIES:
            return None
    if isinstance(mt, str):
        if mt in FAMILIES or mt in WRAPPER_TEXT_TYPES:
            return None
        if mt in ENCODER_TYPES:
            return Triage("out-of-scope", f"encoder-only model (model_type '{mt}')")
        if mt in ENCODER_DECODER_TYPES:
            only_encoder = archs and all(a.endswith("EncoderModel") for a in archs)
            return Triage(
                "out-of-scope", f"{'encoder' if only_encoder else 'encoder-decoder'} model (model_type '{mt}')"
            )
        if mt in VISION_AUDIO_TYPES:
            return Triage("skip", f"vision/speech model config (model_type '{mt}')")
    if archs:
        if all(a.endswith(_VISION_AUDIO_HEADS) for a in archs):
            return Triage("skip", f"vision/speech model config ({archs[0]})")
        if all(a.endswith(_ENCODER_HEADS) for a in archs):
            return Triage("out-of-scope", f"encoder-only model ({archs[0]})")
    return None


def triage(doc) -> Optional[Triage]:
    """``None`` when the document should be linted; else what it is and why it is not."""
    data = doc.data
    if not isinstance(data, dict) or not data:
        return None  # let the loader/adapters report it (an empty file, a list)
    keys = set(data)
    if "_diffusers_version" in keys or ("_class_name" in keys and "model_type" not in keys):
        name = data.get("_class_name")
        return Triage("skip", f"diffusers {name if isinstance(name, str) else 'component'} config")
    if any(k.startswith("pooling_mode_") for k in keys) or "word_embedding_dimension" in keys:
        return Triage("skip", "sentence-transformers pooling config")
    if {"in_features", "out_features"} <= keys and "hidden_size" not in keys:
        return Triage("skip", "sentence-transformers Dense layer config")
    if "peft_type" in keys:
        return Triage("skip", f"PEFT adapter config ({data.get('peft_type')}); lint the base model's config")
    by_model = _by_model(data)
    if by_model is not None:
        return by_model
    if keys & ARCHITECTURE_KEYS - {"vocab_size"}:
        return None  # some architecture: the adapters decide (and report a located error if it is broken)
    if keys & _PROCESSOR_KEYS:
        return Triage("skip", "image/audio processor config")
    if keys & _TOKENIZER_KEYS:
        return Triage("skip", "tokenizer config")
    if keys & _GENERATION_KEYS:
        return Triage("skip", "generation config")
    if "vocab_size" in keys or _some_format_detects(doc):
        return None
    return Triage("skip", "no model-architecture keys")


def _some_format_detects(doc) -> bool:

    try:
        detect_format(doc)
    except FormatNotRecognized:
        return False
    return True
