"""Train a byte-level BPE on the training documents and write both splits as token files."""

import pandas as pd

from neurips26.common import corpus
from neurips26.common.io import atomic_path, write_text
from neurips26.common.runtime import start_job

log = start_job(snakemake)
out, vocab = snakemake.output, int(snakemake.wildcards.vocab)
documents = pd.read_parquet(snakemake.input[0])
texts = corpus.split_texts(documents)
tokenizer = corpus.train_tokenizer(texts["train"], vocab)
tokens = {split: corpus.encode_documents(tokenizer, texts[split]) for split in texts}
meta = corpus.corpus_meta(documents, tokenizer, tokens["train"], tokens["val"], snakemake.wildcards.corpus)
log.info("BPE %d: %s tokens", tokenizer.get_vocab_size(), meta["tokens"])
with atomic_path(out.tokenizer) as tmp:
    tokenizer.save(str(tmp))
for split in ("train", "val"):
    with atomic_path(out[split]) as tmp:
        corpus.write_tokens(tmp, tokens[split])
write_text(out.meta, corpus.dumps_meta(meta))
