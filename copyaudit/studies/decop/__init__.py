"""DE-COP (paper 001): multiple-choice membership inference over option orders."""
