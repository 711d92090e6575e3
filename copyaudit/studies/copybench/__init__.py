"""CopyBench (paper 003): literal, non-literal and QA copying."""
