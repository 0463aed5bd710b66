"""A tiny Llama for vLLM on the CPU (2 layers, hidden 128, 2 heads of 64: vLLM 0.32's CPU
attention has no kernel for heads of 16), built offline: no hub, no weights.

vLLM serves it with `--load-format dummy` (random weights), so the model is only its
config.json and a tokenizer. The tokenizer is a byte-level BPE trained here on a fixed
corpus (the same bytes every time, so the same merges), with a ChatML template: the
router loads the same tokenizer.json with `--tokenizer` and must produce the ids vLLM's
own `/tokenize` gives. What the model says is noise; what matters is the engine around
it (scheduler, prefix cache, KV events, metrics, chat templating).

Usage: python tiny-model.py OUT_DIR
"""

import json
import os
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

VOCAB = 2048
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def corpus():
    # Deterministic English-like text: enough variety for a few thousand merges.
    words = (
        "the of and to in is that for it as was with be by on not he this are or his from at which but have an they "
        "you were her all she there would their we him been has when who will more no if out so said what up its about "
        "into than them can only other new some could time these two may then do first any my now such like our over "
        "man me even most made after also did many before must through back years where much your way well down should "
        "because each just those people how too little state good very make world still own see men work long get here "
        "between both life being under never day same another know while last might us great old year off come since "
        "against go came right used take three router engine cache prefix queue worker request token block model serve "
        "latency throughput decode prefill batch limit gate affinity diverted fleet shared prompt system user assistant"
    ).split()
    lines = []
    for i in range(4000):
        n = 6 + (i * 7) % 11
        line = " ".join(words[(i * 31 + j * 17 + (i // 7) * j) % len(words)] for j in range(n))
        lines.append(line.capitalize() + (". " if i % 3 else "? ") + str(i % 97))
    return lines


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        min_frequency=2,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    tok.save(os.path.join(out, "tokenizer.json"))

    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": None,
                "eos_token": "<|im_end|>",
                "pad_token": "<|endoftext|>",
                "unk_token": None,
                "add_bos_token": False,
                "add_eos_token": False,
                "model_max_length": 4096,
                "chat_template": CHAT_TEMPLATE,
            },
            f,
            indent=2,
        )

    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(
            {
                "architectures": ["LlamaForCausalLM"],
                "model_type": "llama",
                "hidden_size": 128,
                "intermediate_size": 256,
                "num_hidden_layers": 2,
                "num_attention_heads": 2,
                "num_key_value_heads": 2,
                "head_dim": 64,
                "hidden_act": "silu",
                "max_position_embeddings": 4096,
                "rms_norm_eps": 1e-5,
                "rope_theta": 10000.0,
                "vocab_size": VOCAB,
                "bos_token_id": 0,
                "eos_token_id": tok.token_to_id("<|im_end|>"),
                "pad_token_id": 0,
                "tie_word_embeddings": True,
                "torch_dtype": "bfloat16",
            },
            f,
            indent=2,
        )

    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": tok.token_to_id("<|im_end|>"), "pad_token_id": 0}, f)


if __name__ == "__main__":
    main()
