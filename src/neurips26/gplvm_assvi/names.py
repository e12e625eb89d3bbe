"""The method names of paper 17, shared by the experiment (which builds the models) and the claims (which read
their metrics) without importing either's dependencies."""

ABLATIONS = ("ssvi_summary", "ssvi_indep")  # run on the datasets `ablation.datasets` names, beside the compared ones
GPLVM_METHODS = ("bgplvm_mf", "aeb_mf", "ssvi_amort", *ABLATIONS)
PCA = "pca"
METHODS = (*GPLVM_METHODS, PCA)
