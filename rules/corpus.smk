# The shared text corpus of the small language-model experiments (papers 07 and 09): documents from text that
# ships with the machine, split by document -> a byte-level BPE trained on the training documents -> token files.
# Corpora are named in neurips26.common.corpus.CORPORA; a paper asks for
# results/{scale}/corpus/{corpus}/bpe{vocab}/{train,val}.bin.


rule corpus_documents:
    output:
        "results/{scale}/corpus/{corpus}/documents.parquet",
    log:
        "results/{scale}/corpus/logs/{corpus}_documents.log",
    benchmark:
        "results/{scale}/corpus/benchmarks/{corpus}_documents.tsv"
    wildcard_constraints:
        corpus="[a-z_]+",
    conda:
        "../envs/text.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        validation_fraction=0.05,
    script:
        "../scripts/common/corpus_documents.py"


rule corpus_tokenize:
    input:
        "results/{scale}/corpus/{corpus}/documents.parquet",
    output:
        tokenizer="results/{scale}/corpus/{corpus}/bpe{vocab}/tokenizer.json",
        train="results/{scale}/corpus/{corpus}/bpe{vocab}/train.bin",
        val="results/{scale}/corpus/{corpus}/bpe{vocab}/val.bin",
        meta="results/{scale}/corpus/{corpus}/bpe{vocab}/meta.json",
    log:
        "results/{scale}/corpus/logs/{corpus}_bpe{vocab}.log",
    benchmark:
        "results/{scale}/corpus/benchmarks/{corpus}_bpe{vocab}.tsv"
    wildcard_constraints:
        corpus="[a-z_]+",
        vocab=r"\d+",
    conda:
        "../envs/text.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/common/corpus_tokenize.py"
