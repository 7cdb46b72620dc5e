"""`lmrl reproduce`: the recipes, the runs and the report."""
