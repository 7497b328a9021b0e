"""The tests mirror the product: tests/<part>/test_<thing>.py tests what <part>/ holds, for every part of the layout
(core, agents, webhooks, conversations, facts, reflections, formation, portability, api, console, mcp_server). A test
module sits with the code it is about, whatever way in it takes: a management command with the part that owns the
command (export, import, erase and re-embed are portability's), a tool with formation's tool service, a request to
/api/v1/ with api/ when it is about the endpoint itself (its fields, paging, errors), the admin's pages with
console/.

Folders that are not parts hold what is tested across parts, as a concern of its own: hardening/ (hostile input,
tenant isolation, faults, fuzzing, memory poisoning), observability/ (metrics, logs, traces, the monitoring files),
clients/ (the Python and TypeScript SDKs against a live server), integrations/ (the framework adapters and the
integration docs), deployment/ (the stack `make run` starts, docker-compose and the deploy files). At the top: the
rules read from the whole source (test_architecture.py, test_no_dead_code.py) and the upgrade from the previous
release.

What several test modules share is a support module with public names (tests/*_support.py, tests/factories.py for
the rows tests build, tests/<folder>/*_support.py) or a fixture in a conftest.py: a test module never imports
another test module."""
