"""The relevance model: does an answer answer its own question, or another one?"""
