"""Learning from labeled propositions: fine-tuned encoder, proposition memory and learned fusion, saved as artifacts."""
