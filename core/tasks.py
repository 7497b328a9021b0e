from celery import shared_task

from core.services import corpus_statistics_fold


@shared_task(name="core.corpus_statistics_fold", ignore_result=True)
def corpus_statistics_fold_task() -> int:
    """Idempotent: a second run folds only what was appended since."""
    return corpus_statistics_fold()
