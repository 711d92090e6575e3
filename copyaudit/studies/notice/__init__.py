"""The copyright-notice study (paper 002): notices, tasks and its Table 1."""
