"""The operator console: every Django admin page and operator page, one package per app whose models it shows
(console/<app>/), above the domain so that a page may show and act on memory from any app. Pages read through the
apps' selectors and write through their services."""
