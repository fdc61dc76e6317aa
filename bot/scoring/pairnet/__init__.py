"""Pair classifiers fine-tuned here from the bot's own encoder: the stance model (claim,
sentence) and the relevance model (question, answer) share this network and training loop."""
