"""Group rounds on Telegram: wiring (setup), the pump (runner), the deadline ticker, the per-group
message budget (limiter), the "Next" button (keyboards) and the round messages (rendering)."""
