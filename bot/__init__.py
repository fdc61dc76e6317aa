"""Mock-interview Telegram bot: questions, grading, daily questions, group rounds."""
