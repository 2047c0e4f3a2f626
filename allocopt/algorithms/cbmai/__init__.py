"""The fixed-budget algorithms of the CBMAI layer (SFSR, SFSR-L, USLP) and their error rates."""
