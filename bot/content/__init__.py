"""Question bank: schema and loader."""
