"""The DE-COP screens: a run's works and ROC, a work's passages, one passage's orders."""
