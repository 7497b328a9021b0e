"""The REST API, /api/v1/ and the OpenAI-compatible chat proxy at /v1/: one package per resource (api/<app>/: views,
serializers, urls, OpenAPI examples), above the domain so that an endpoint may use any app. Views stay thin: they
validate with their serializers and call the apps' services and selectors."""
