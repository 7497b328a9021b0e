from django.contrib.auth import get_user_model
from django.db import connection, transaction


@transaction.atomic
def admin_user_ensure(*, username: str, password: str) -> bool:
    """Create a superuser unless one with that name exists (an existing password is left as the operator set it)."""
    user_model = get_user_model()
    if user_model.objects.filter(username=username).exists():
        return False
    user_model.objects.create_superuser(username=username, password=password, email="")
    return True


_CORPUS_FOLD_LOCK_KEY = 7_340_002


@transaction.atomic
def corpus_statistics_fold() -> int:
    """Move the pending statistics changes the triggers appended into the kept statistics, in one statement: readers
    see either the changes or their sum, never both or neither. Scopes that fell to no documents are removed. One
    fold at a time (an advisory lock); changes committed meanwhile wait for the next. Returns how many changes it
    folded."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_CORPUS_FOLD_LOCK_KEY])
        cursor.execute(
            """
            WITH folded AS (
                DELETE FROM core_corpusstatisticschange
                RETURNING corpus, space_id, scope_id, documents, lexemes
            ), summed AS (
                SELECT corpus, space_id, scope_id, sum(documents) AS documents, sum(lexemes) AS lexemes, count(*) AS n
                FROM folded GROUP BY corpus, space_id, scope_id
            ), applied AS (
                INSERT INTO core_corpusstatistics AS kept (corpus, space_id, scope_id, documents, lexemes)
                SELECT corpus, space_id, scope_id, documents, lexemes FROM summed
                ON CONFLICT (corpus, space_id, scope_id) DO UPDATE
                SET documents = kept.documents + EXCLUDED.documents, lexemes = kept.lexemes + EXCLUDED.lexemes
            )
            SELECT coalesce(sum(n), 0) FROM summed
            """
        )
        folded = int(cursor.fetchone()[0])
        cursor.execute("DELETE FROM core_corpusstatistics WHERE documents = 0")
    return folded
