"""The method names of paper 17, shared by the experiment (which builds the models) and the claims (which read
their metrics) without importing either's dependencies."""

GPLVM_METHODS = ("bgplvm_mf", "aeb_mf", "ssvi_amort", "ssvi_indep")
ABLATION = "ssvi_indep"
PCA = "pca"
METHODS = (*GPLVM_METHODS, PCA)
