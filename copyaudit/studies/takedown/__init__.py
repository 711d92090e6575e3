"""The takedown comparison (CoTaEval, Wei et al. 2024): one suite and model, one run per
takedown method, compared by win rates on eight infringement metrics, utility and speed."""
