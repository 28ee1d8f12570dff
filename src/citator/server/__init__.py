"""HTTP surfaces: the search service and the blinded review web app."""
