app_name = "conversations-api"

urlpatterns: list = []
