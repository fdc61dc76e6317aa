"""The aiogram side only: routers, keyboards, rendering, middlewares, delivery."""
