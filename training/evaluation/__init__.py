"""Playing many episodes and scoring them (LMRL's and the store's normalisation)."""
