"""Cross-model comparison tables (issue 17): one row per model, columns as the papers print them."""
