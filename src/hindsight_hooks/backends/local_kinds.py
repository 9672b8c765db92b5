"""A question that asks for a kind of tool finds the memories that name the tool (ADR 232).

A developer asks their agent "which CI do we use?", "what's our hosting?", "what UI framework
is the dashboard in?", "which message queue did we pick?". The memories that answer say the
tool's name and rarely its kind: "Deploys go through GitHub Actions to Fly.io", "The frontend is
written in Svelte", "orders go onto RabbitMQ". The index matches words, and the ``[semantic]``
extra's static vectors do not know what a name is (cosine 0.02 between "what UI framework?" and
"The frontend is written in Svelte"), so such a question found nothing.

The table below names, for each kind a developer asks about, the words a question calls it by
and the well-known tools of that kind. When a question *asks for* a kind (``asked_kinds``: "what
/ which … KIND", "KIND do we use", "what do we use for KIND", "where do we host?", "what is it
written in?"), the tools of that kind that some unit of the bank names are searched beside the
question's words, and a unit that names one counts as saying the kind's word (``kind_members``).
A question that only mentions a kind ("why does the cache warmer crash?") is searched as before.

Names that are also everyday words ("render", "linear", "express", "spring", "go") are left out,
or listed by a longer form ("expressjs", "spring boot"): a wrong name would bring in memories
about something else. The table holds facts (which tool is of which kind), not anyone's prose.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache

from .local_abbrev import counterparts
from .local_text import fold, fts_tokens, query_terms, said_in_english, term_key
from .local_time import content_stems

MAX_TOOLS = 12  # tools searched for one question, the bank's most named first

# Each kind: its name, what a question calls it, then (after "|") the tools of that kind, as people
# write them; a line that starts with spaces goes on with the one above. Each tool is searched by its
# tokens as the index holds them ("Fly.io" as the phrase "fly io"). Read on first use (``_table``).
_TABLE = """
database: database, databases, db, dbs, datastore, data store, rdbms, sql database, stack, tech stack |
    Postgres, PostgreSQL, MySQL, MariaDB, SQLite, MongoDB, Mongo, DynamoDB, Cassandra, CockroachDB, CouchDB,
    Firestore, Supabase, PlanetScale, MSSQL, SQL Server, ClickHouse, DuckDB, TimescaleDB, InfluxDB, Neo4j,
    ScyllaDB, Cosmos DB, Amazon Aurora, Cloud Spanner, TiDB, Couchbase, RethinkDB, FaunaDB, SurrealDB, libSQL,
    Turso
cache: cache, caches, caching, cache layer, key value store, kv store, in memory store | Redis, Valkey,
    Memcached, KeyDB, Varnish, Hazelcast, Ehcache
queue: queue, queues, message queue, message broker, broker, event bus, event streaming, pub sub, pubsub,
    messaging system, streaming platform | RabbitMQ, Kafka, SQS, SNS, NATS, Pulsar, Kinesis, ZeroMQ, ActiveMQ,
    Redpanda, BullMQ, EventBridge, Google Pub/Sub, Azure Service Bus, Service Bus, Mosquitto, MQTT
jobs: job queue, task queue, background jobs, background job, worker queue, job runner, scheduler, task runner,
    workflow engine, orchestrator | Celery, Sidekiq, RQ, BullMQ, Resque, Huey, Dramatiq, Airflow, Dagster,
    Prefect, Hangfire, Argo Workflows, Oban, cron
ci: ci, cd, ci/cd, ci cd, continuous integration, continuous delivery, continuous deployment, build server,
    build pipeline, ci pipeline, pipeline, pipelines, ci server, ci system | GitHub Actions, Jenkins, GitLab CI,
    CircleCI, Travis CI, Travis, Buildkite, TeamCity, Azure Pipelines, Bitbucket Pipelines, Drone CI, Argo CD,
    ArgoCD, Tekton, Woodpecker CI, AppVeyor, Codemagic, Semaphore CI, Spinnaker, Flux CD
hosting: hosting, hosting provider, web host, cloud, cloud provider, cloud platform, paas, platform as a
    service, deployment platform, deploy target, infrastructure provider | AWS, Amazon Web Services, GCP, Google
    Cloud, Azure, Heroku, Fly.io, Vercel, Netlify, DigitalOcean, Linode, Hetzner, Cloudflare, Cloudflare
    Workers, Cloudflare Pages, GitHub Pages, Firebase, OVH, OVHcloud, Vultr, App Engine, Cloud Run, Elastic
    Beanstalk, AWS Lambda, EC2, ECS, Fargate, Scaleway, Render.com, Railway.app, Deno Deploy, Kubernetes, Oracle
    Cloud, IBM Cloud, Akamai, Lightsail, Coolify, Dokku
frontend: frontend, front end, front-end, ui, ui framework, ui library, frontend framework, front end framework,
    js framework, javascript framework, spa framework, client framework, framework, frameworks, web framework,
    stack, tech stack | React, Svelte, SvelteKit, Vue, Vue.js, Nuxt, Angular, AngularJS, SolidJS, Next.js,
    Astro, Ember.js, Preact, Qwik, htmx, Alpine.js, React Native, Flutter, jQuery, Backbone.js, Elm, Gatsby,
    Blazor, Ionic, Electron, Tauri, SwiftUI, Jetpack Compose, Mithril
backend: backend, back end, back-end, backend framework, web framework, api framework, server framework, http
    framework, framework, frameworks, stack, tech stack | Django, Flask, FastAPI, Ruby on Rails, Laravel,
    ExpressJS, Express.js, NestJS, Spring Boot, Phoenix Framework, Gin, Actix, Axum, Koa, Hapi, Sinatra,
    ASP.NET, Symfony, Starlette, Litestar, Hono, Fastify, Sanic, AIOHTTP, CakePHP, CodeIgniter, Micronaut,
    Quarkus, Ktor, Rocket.rs, Node.js, NodeJS, Deno, Bun, gRPC, GraphQL
language: language, languages, programming language, lang, stack, tech stack | Python, TypeScript, JavaScript,
    Rust, Golang, Java, Kotlin, Swift, Ruby, PHP, Elixir, Erlang, Haskell, Scala, Clojure, C#, C++, CSharp,
    Dart, Zig, Lua, Perl, OCaml, F#, Objective-C, Bash, PowerShell, Fortran, COBOL, Solidity, WebAssembly, Wasm
tests: test framework, test runner, testing framework, testing library, testing tool, test tool, test library,
    test suite, e2e framework, end to end framework, unit test framework | pytest, unittest, Jest, Vitest,
    Mocha, Jasmine, Cypress, Playwright, Selenium, RSpec, Minitest, JUnit, TestNG, nose2, PHPUnit, xUnit, NUnit,
    Testing Library, Puppeteer, WebdriverIO, Appium, tox, nox, ExUnit, Catch2, GoogleTest, doctest, k6, Locust,
    JMeter, Gatling
packages: package manager, package managers, dependency manager, dependency management, packaging tool, env
    manager, environment manager | npm, pnpm, Yarn, Bun, pip, pipenv, Poetry, uv, Conda, Mamba, Cargo, Maven,
    Gradle, Composer, Bundler, NuGet, Go modules, Homebrew, brew, PDM, pipx, vcpkg, Conan, Nix, CocoaPods, Swift
    Package Manager, opam, Cabal, asdf, mise, pyenv, nvm, Volta
build: bundler, build tool, build system, build tooling, module bundler, compiler toolchain | webpack, Vite,
    esbuild, Rollup, Parcel, Turbopack, Rspack, Bazel, Makefile, CMake, Gradle, Maven, Nx, Turborepo, Buck2,
    Meson, setuptools, Hatchling, SWC, Babel, tsup, Rolldown, Snowpack, Gulp, Earthly
lint: linter, linters, lint, linting, formatter, formatters, code formatter, style checker, code style, static
    analysis, static analyzer, lint tool | ESLint, Prettier, Ruff, Black, Flake8, Pylint, isort, RuboCop,
    golangci-lint, Clippy, rustfmt, gofmt, Stylelint, Biome, YAPF, autopep8, ShellCheck, Hadolint, markdownlint,
    SonarQube, Semgrep, Bandit, TSLint, dprint, Oxlint, StandardJS, pre-commit, clang-format, clang-tidy,
    ktlint, SwiftLint, PHPStan
types: type checker, type checking, typechecker, static typing, type system | mypy, Pyright, Pyre, pytype, tsc,
    Sorbet, Pylance, basedpyright
editor: editor, editors, ide, ides, text editor, code editor | Vim, Neovim, nvim, Emacs, VS Code, VSCode, Visual
    Studio Code, Visual Studio, IntelliJ, PyCharm, WebStorm, GoLand, RubyMine, CLion, PhpStorm, Sublime Text,
    Zed, Helix, nano, Xcode, Android Studio, JetBrains, Eclipse IDE, Spacemacs, Doom Emacs, JupyterLab, Jupyter,
    Windsurf
vcs: version control, vcs, scm, source control, code hosting, git host, git hosting, repo host, repository host,
    forge | Git, GitHub, GitLab, Bitbucket, Mercurial, SVN, Subversion, Perforce, Gitea, Forgejo, Codeberg,
    Azure DevOps, SourceHut, Jujutsu, Pijul, Gerrit
tracker: issue tracker, bug tracker, ticket tracker, ticketing, ticketing system, tracker, project management,
    project tracker, task tracker, kanban board, backlog tool | Jira, Linear.app, GitHub Issues, GitLab Issues,
    Trello, Asana, YouTrack, ClickUp, Redmine, Bugzilla, Basecamp, Azure Boards, Pivotal Tracker, Monday.com,
    Height.app, Plane.so, Taiga, Phabricator, Airtable, Wrike, Smartsheet
monitoring: monitoring, observability, metrics, apm, dashboards, monitoring tool, monitoring stack, telemetry,
    tracing, distributed tracing, alerting | Prometheus, Grafana, Datadog, New Relic, Honeycomb, Sentry,
    OpenTelemetry, OTel, Jaeger, Zipkin, Nagios, Zabbix, CloudWatch, Stackdriver, Splunk, Kibana, Loki,
    VictoriaMetrics, SigNoz, Dynatrace, AppDynamics, PagerDuty, Opsgenie, Netdata, Icinga, Uptime Kuma, Pingdom,
    UptimeRobot, Better Stack, Checkly, Elastic APM, Thanos, InfluxDB, Telegraf, StatsD, Chronograf, Lightstep,
    Instana
logging: logging, log aggregation, log management, log storage, log shipping, logs pipeline, log platform,
    logging stack, log search | ELK, Elasticsearch, Logstash, Kibana, Loki, Splunk, Papertrail, Loggly, Fluentd,
    Fluent Bit, Graylog, Datadog, CloudWatch, Sumo Logic, Logtail, Better Stack, OpenSearch, Vector.dev, syslog,
    journald, rsyslog, Promtail
errors: error tracking, error tracker, error monitoring, error reporting, crash reporting, exception tracking,
    crash reporter | Sentry, Rollbar, Bugsnag, Honeybadger, Airbrake, Raygun, Crashlytics, GlitchTip, TrackJS,
    LogRocket
oncall: on call, on-call, oncall, paging, pager, incident management, incident response, alert routing |
    PagerDuty, Opsgenie, incident.io, VictorOps, Splunk On-Call, Grafana OnCall, FireHydrant, Rootly, xMatters,
    Squadcast, Better Stack
containers: container orchestration, orchestration, orchestrator, container runtime, container platform,
    containerization | Kubernetes, k8s, Docker, Docker Compose, Docker Swarm, Nomad, Podman, ECS, EKS, GKE, AKS,
    OpenShift, Helm, k3s, minikube, Rancher, containerd, Fargate, Kustomize, Knative, microk8s, Talos, LXC, LXD,
    Portainer
iac: iac, infrastructure as code, infra as code, provisioning, provisioning tool, config management,
    configuration management | Terraform, OpenTofu, Pulumi, Ansible, Chef Infra, Puppet, SaltStack,
    CloudFormation, AWS CDK, CDK, Bicep, Crossplane, Terragrunt, Packer, Vagrant, cloud-init, NixOps
auth: auth provider, identity provider, idp, sso provider, authentication provider, login provider, auth
    service, identity service, user management, oauth provider, auth, authentication, sso, single sign on |
    Auth0, Okta, Keycloak, Cognito, Firebase Auth, Clerk.com, Supabase Auth, Azure AD, Entra ID, OneLogin, Ory,
    FusionAuth, WorkOS, Authentik, Google Sign-In, Stytch, SuperTokens, Zitadel, Authelia, Passport.js,
    NextAuth, Auth.js, OAuth, OpenID Connect, OIDC, SAML, LDAP, Active Directory, JWT
payments: payment provider, payment processor, payments, billing provider, payment gateway, payment service,
    billing, payments provider, subscription billing | Stripe, PayPal, Braintree, Adyen, Paddle.com, Lemon
    Squeezy, Chargebee, Recurly, Mollie, Razorpay, Klarna, Apple Pay, Google Pay, Checkout.com, Authorize.net,
    Worldpay, GoCardless, RevenueCat, Zuora, Paystack, Flutterwave, Mercado Pago
email: email provider, email service, mail provider, smtp provider, transactional email, email delivery, email
    api, mail service, email sending, mailer | SendGrid, Mailgun, Postmark, Amazon SES, SES, Mailchimp,
    Mandrill, SparkPost, Brevo, Sendinblue, Mailjet, SMTP2GO, Mailtrap, ConvertKit, Customer.io, Postfix, Exim
chat: team chat, chat tool, chat app, messaging, messaging app, communication tool, comms, chat platform |
    Slack, Discord, Microsoft Teams, MS Teams, Mattermost, Zulip, Matrix.org, Rocket.Chat, Telegram, WhatsApp,
    Google Chat, IRC, Gitter, Webex
search: search engine, search backend, full text search, full-text search, search index, search service, search
    server | Elasticsearch, OpenSearch, Solr, Meilisearch, Typesense, Algolia, Lucene, Vespa, Manticore,
    Tantivy, Sphinx Search, ZincSearch, Quickwit, FTS5, pg_trgm, Bleve, Xapian, Whoosh, Coveo
storage: object storage, blob storage, file storage, object store, blob store, storage, file store, asset
    storage, media storage | S3, Amazon S3, GCS, Google Cloud Storage, Azure Blob, Azure Blob Storage, MinIO,
    R2, Cloudflare R2, Backblaze B2, Backblaze, Wasabi, Ceph, DigitalOcean Spaces, SeaweedFS, Storj, Filestore,
    EFS, NFS
cdn: cdn, cdns, content delivery network, edge network, edge cache | Cloudflare, Fastly, Akamai, CloudFront,
    BunnyCDN, Bunny.net, jsDelivr, KeyCDN, unpkg, Azure CDN, Cloud CDN, StackPath, Imperva, CDN77, Gcore
proxy: web server, reverse proxy, proxy, load balancer, load balancing, ingress, ingress controller, api
    gateway, gateway, app server, application server, wsgi server, asgi server, http server | nginx, Apache,
    httpd, Caddy, Traefik, HAProxy, Envoy, Istio, Gunicorn, Uvicorn, Puma, IIS, lighttpd, Tomcat, Jetty, ELB,
    ALB, NLB, Kong, Apigee, Tyk, Hypercorn, uWSGI, Daphne, Granian, OpenResty, Pingora, Linkerd, Cilium,
    MetalLB, HashiCorp Consul
orm: orm, orms, database library, query builder, migration tool, migrations tool, database driver, db driver,
    data access layer, schema migrations | SQLAlchemy, Django ORM, Prisma, TypeORM, Sequelize, Drizzle,
    ActiveRecord, Active Record, Hibernate, GORM, Diesel, Entity Framework, Knex, Peewee, Tortoise ORM, Alembic,
    Flyway, Liquibase, sqlx, Mongoose, Ecto, jOOQ, MyBatis, SQLModel, Kysely, MikroORM, Objection.js, psycopg,
    psycopg2, asyncpg, pgx, sqlc, golang-migrate, dbmate, Sqitch
state: state management, state library, state manager, store library, global state, client state | Redux, Redux
    Toolkit, MobX, Zustand, Pinia, Vuex, Recoil, Jotai, XState, NgRx, TanStack Query, React Query, SWR, Apollo
    Client, Valtio, Effector, Nanostores
styling: css framework, styling, css library, component library, design system, ui kit, css, styling library,
    icon library | Tailwind, Tailwind CSS, TailwindCSS, Bootstrap, Bulma, Material UI, MUI, Chakra UI, Ant
    Design, shadcn, shadcn/ui, Sass, SCSS, Less.js, styled-components, Radix, DaisyUI, Vuetify, Mantine,
    Headless UI, PrimeVue, Quasar, UnoCSS, PostCSS, CSS Modules, Vanilla Extract, Foundation CSS, Semantic UI,
    Font Awesome, Heroicons, Lucide, Material Icons, Storybook
docs: docs site, static site generator, documentation site, documentation tool, docs tool, ssg, docs generator,
    documentation generator, wiki, knowledge base, docs platform | MkDocs, Material for MkDocs, Sphinx,
    Docusaurus, Hugo, Jekyll, Gatsby, Eleventy, 11ty, VitePress, VuePress, Astro, Read the Docs, GitBook,
    mdBook, Hexo, Zola, Pelican, Confluence, Nextra, Starlight, Mintlify, Docsify, Doxygen, JSDoc, TypeDoc,
    pdoc, rustdoc, Swagger, Redoc, Obsidian, BookStack, Wiki.js, DokuWiki, MediaWiki
flags: feature flags, feature flag, feature toggles, feature toggle, feature flagging, experimentation, a/b
    testing, ab testing | LaunchDarkly, Flagsmith, GrowthBook, Split.io, Flipt, ConfigCat, Optimizely, Statsig,
    PostHog, Flagd, OpenFeature, DevCycle, Eppo
analytics: analytics, product analytics, web analytics, tracking, event tracking, usage analytics, telemetry,
    session replay, heatmaps | Google Analytics, GA4, Mixpanel, Amplitude, PostHog, Segment.com, Matomo, Heap
    Analytics, Fathom Analytics, Hotjar, Umami, Pendo, FullStory, LogRocket, Snowplow, RudderStack, June.so,
    Countly, Piwik
secrets: secrets manager, secret manager, secrets management, secret store, secrets store, secrets, vault, key
    management, kms, password manager | HashiCorp Vault, Vault, AWS Secrets Manager, Secrets Manager, 1Password,
    Doppler, SOPS, Infisical, Bitwarden, LastPass, Azure Key Vault, Key Vault, Secret Manager, AWS KMS,
    Parameter Store, SSM, sealed-secrets, External Secrets, git-crypt, Dashlane, KeePassXC
os: operating system, os, distro, linux distro, linux distribution, base image | Ubuntu, Debian, Fedora, Arch
    Linux, Alpine Linux, Alpine, CentOS, RHEL, Red Hat, macOS, Windows, NixOS, Amazon Linux, Rocky Linux,
    AlmaLinux, openSUSE, Gentoo, FreeBSD, OpenBSD, Linux Mint, Pop!_OS, Manjaro, Distroless, Wolfi,
    Bottlerocket, Flatcar, WSL, WSL2, iOS, Android, ChromeOS
shell: shell, shells, terminal, terminal emulator, terminal app, multiplexer, terminal multiplexer | bash, zsh,
    fish shell, PowerShell, Nushell, Oh My Zsh, tmux, Zellij, iTerm2, iTerm, Alacritty, kitty, WezTerm, Windows
    Terminal, Ghostty, GNOME Terminal, Konsole, Starship, Powerlevel10k, xonsh, ksh, tcsh
llm: llm, llms, ai model, language model, model provider, llm provider, ai provider, foundation model, chat
    model, embedding model, embeddings model, inference provider | OpenAI, GPT, GPT-4, GPT-4o, GPT-5, ChatGPT,
    Anthropic, Claude, Gemini, Mistral, Mixtral, Llama, Ollama, DeepSeek, Qwen, Cohere, Groq, Vertex AI,
    Bedrock, Azure OpenAI, Hugging Face, Together AI, OpenRouter, vLLM, llama.cpp, Gemma, Grok, LM Studio,
    Codex, Copilot, WordLlama, MiniLM, BERT, text-embedding-3-small, text-embedding-ada-002, nomic-embed-text,
    bge, e5
design: design tool, design tools, mockups, mockup tool, wireframes, wireframing, prototyping tool, diagram
    tool, diagramming, whiteboard | Figma, Adobe XD, Penpot, Framer, InVision, Zeplin, Balsamiq, Miro, FigJam,
    Excalidraw, draw.io, diagrams.net, Lucidchart, Mermaid, PlantUML, Whimsical, tldraw, Canva, Photoshop,
    Illustrator, Affinity Designer
vectors: vector database, vector store, vector db, vector index, embedding store, vector search, semantic
    search, similarity search, ann index | pgvector, Pinecone, Weaviate, Qdrant, Milvus, Chroma, ChromaDB,
    FAISS, LanceDB, Vespa, Zilliz, HNSW, hnswlib, ScaNN, Turbopuffer, Vald, Marqo, sqlite-vec, sqlite-vss, Redis
    Stack, OpenSearch, Elasticsearch
warehouse: data warehouse, warehouse, analytics database, olap, data lake, lakehouse, analytics db, bi tool,
    business intelligence, etl, elt, data pipeline | Snowflake, BigQuery, Redshift, ClickHouse, Databricks,
    DuckDB, Synapse, Trino, Apache Spark, Druid, Pinot, StarRocks, Metabase, Looker, Tableau, Power BI, Redash,
    dbt, Fivetran, Airbyte, Delta Lake, Parquet, Hadoop, Flink
dns: dns, dns provider, domain registrar, registrar, domain provider | Cloudflare, Route 53, Route53, Namecheap,
    GoDaddy, Gandi, Porkbun, Google Domains, Squarespace Domains, DNSimple, NS1, Dynadot, Name.com, OVH
api: api style, api protocol, rpc framework, api layer, api spec, api schema, serialization format, wire format
    | GraphQL, gRPC, tRPC, OpenAPI, Swagger, Protobuf, Protocol Buffers, Avro, MessagePack, WebSockets,
    JSON-RPC, Connect RPC, Cap'n Proto
"""


# The kinds most asked about, by their names in German, French, Spanish, Italian, Portuguese, Dutch,
# Russian, Polish and Ukrainian, as ``fold`` leaves them (no accents; "й" read as "и"; Polish "ł"
# and Ukrainian "і" have no base letter and stay), in the cases a question puts them in ("Какую базу
# данных", "Jakiej bazy danych"). Their tools are the table's.
_TABLE_ELSEWHERE = """
database: datenbank, datenbanken, base de donnees, bases de donnees, bdd, base de datos, bases de datos,
    base di dati, banca dati, banco de dados, bancos de dados, base de dados, databank, база данных, базу
    данных, базы данных, базе данных, бд, субд, baza danych, baze danych, bazy danych, bazie danych, база
    даних, базу даних, бази даних, базі даних
cache: кеш, кэш, кеша, кэша, кешу, кэшу, pamiec podreczna
queue: warteschlange, file d'attente, file de messages, cola de mensajes, coda di messaggi, fila de mensagens,
    wachtrij, berichtenwachtrij, очередь, очереди, очередь сообщении, брокер, брокер сообщении, kolejka,
    kolejke, kolejki, kolejka wiadomosci, черга, чергу, черги, черга повідомлень
ci: kontinuierliche integration, integration continue, integracion continua, integrazione continua,
    integracao continua, continue integratie, непрерывная интеграция, непрерывнои интеграции, ciagła
    integracja, ciagłej integracji, безперервна інтеграція, безперервноі інтеграціі, пайплаин, пайплаины
hosting: hoster, hosting-anbieter, cloud-anbieter, hebergement, hebergeur, fournisseur cloud, alojamiento,
    proveedor de nube, nube, provider cloud, hospedagem, provedor de nuvem, nuvem, hostingprovider,
    хостинг, облако, облачныи проваидер, chmura, chmure, chmury, dostawca chmury, хмара, хмару, хмари
frontend: фронтенд, фронтенда, фреймворк, фреймворка, фреймворки, framework frontendowy, cadriciel
backend: бэкенд, бекенд, бэкенда, бекенда, фреймворк, фреймворка, фреймворки, framework backendowy
language: sprache, programmiersprache, langage, langage de programmation, lenguaje, lenguaje de
    programacion, linguaggio, linguaggio di programmazione, linguagem, linguagem de programacao, taal,
    programmeertaal, язык, языке, язык программирования, jezyk, jezyku, jezyk programowania, мова, мову,
    мові, мова програмування
editor: editeur, редактор, редактора, edytor, edytora, edytorze
packages: paketmanager, paketverwaltung, gestionnaire de paquets, gestor de paquetes, gestore di pacchetti,
    gerenciador de pacotes, pakketbeheerder, менеджер пакетов, menedzer pakietow, менеджер пакетів
tests: testframework, framework de test, framework de tests, framework de pruebas, framework di test,
    framework de testes, тестовыи фреймворк, фреймворк для тестов, framework testowy, тестовии фреймворк
"""

# What a question that asks for the kind says right after its name: nothing more, a verb or a word
# of the asking ("which database do we use?", "what CI runs the e2e tests?", "which queue for
# orders?"). Anything else makes the name part of another one ("what is the cache warmer's timeout?"
# asks about the cache warmer).
_AFTER_ASKED = re.compile(
    r"\s*(?:$|[?.!,;:)]|(?:do|does|did|is|are|was|were|should|shall|would|will|can|could|must|might|may"
    r"|we|you|i|they|it|he|she|for|in|on|at|to|with|as|of|and|or|that|which|this|these|those|now|today"
    r"|currently|again|here|there|though|then|please|anymore|any\s+more"
    r"|runs?|running|handles?|hosts?|serves?|powers?|stores?|backs?|holds?|keeps?|sends?|has|have|had"
    r"|gets?|got|uses?|used|sits?|lives?|deploys?|builds?|checks?|tests?|formats?|lints?|tracks?|pages?"
    r"|did\s+we|provider|providers|service|services|tool|tools|library|libraries|lib|setup|set\s+up"
    r"|stack|choice|solution|option|options|vendor|platform|system|engine|framework)\b)"
)
# Before the name: "what / which", perhaps "is / are / 's", "the / our / your", and up to two words
# ("which message queue", "what's our cloud provider", "what kind of database").
_BEFORE_WH = re.compile(
    r"\b(?:what|which)(?:\s*['’]?s|\s+(?:is|are|was|were))?(?:\s+(?:the|our|your|my|their|a|an|kind\s+of"
    r"|sort\s+of|type\s+of|types\s+of|kinds\s+of))*(?:\s+[\w./+#-]+){0,2}\s+$"
)
# "What do we use for CI?", "what did we pick as our queue?", "do we have a cache?", "is there a
# linter?", "remind me of our hosting".
_BEFORE_USE = re.compile(
    r"\b(?:use|using|used|run|running|rely\s+on|relying\s+on|chose|choose|chosen|picked|pick|went\s+with"
    r"|go\s+with|going\s+with|settled\s+on|switch(?:ed)?\s+to|moved\s+to|migrated\s+to|prefer|preferred"
    r"|have|has|is\s+there|are\s+there|set\s+up|setup|deploy(?:ed)?\s+(?:on|to)|host(?:ed)?\s+(?:on|at|with)"
    r"|remind\s+me\s+(?:of|about)|tell\s+me\s+(?:about|of))"
    r"(?:\s+(?:for|as|on|in|with))?(?:\s+(?:the|our|a|an|my|any|your|their))?(?:\s+[\w./+#-]+)?\s+$"
)
# "Where are the secrets stored?", "where is our database?", "where do we keep secrets?" (ADR 236):
# the name after "where" and its verb, then at most a verb of keeping and a word of now, and the
# question ends ("where did the cache go wrong?" asks about a failure).
_BEFORE_WHERE = re.compile(
    r"\bwhere(?:\s*['’]?s|\s+(?:is|are|was|were|do|does|did|should|shall|would|will|can|could))"
    r"(?:\s+(?:the|our|your|my|their|we|you|i))*(?:\s+[\w./+#-]+)?\s+$"
)
_AFTER_WHERE = re.compile(
    r"(?:\s+(?:stored|kept|managed|located|saved|held|live|lives|living|go|goes|sit|sits|come\s+from"
    r"|configured|defined|set\s+up|store|keep|put|find))?(?:\s+(?:now|today|currently|again|these\s+days))?"
    r"\s*(?:$|[?.!])"
)
_QUESTION = re.compile(r"\?|^\s*(?:what|which|where|who|how|do|does|did|is|are|can|could|remind|tell)\b")
# "Where do we host?", "where is the API deployed?", "where does it run?": the hosting.
_WHERE_HOSTED = re.compile(
    r"\bwhere\b(?:\s+[\w'’.-]+){0,5}?\s+(?:host|hosted|hosting|deploy|deployed|deploying|deploys|runs?|running"
    r"|live|lives|served|serve|served\s+from)\b"
)
# "What is the backend written in?", "what language is it in?": the language.
_WRITTEN_IN = re.compile(r"\b(?:written|coded|implemented|built|programmed|developed)\s+in\b\s*(?:[?.!]|$)")
# The same questions elsewhere: "Welche Datenbank …?", "Quelle base de données …?", "¿Qué base de
# datos …?", "Какую базу данных …?", "Jakiej bazy danych …?", up to two words between; or the name
# after a word for "for" or "as" ("Was nutzen wir für CI?", "¿Qué usamos para CI?", "Что мы
# используем для CI?"). What follows the name is not read: these languages put more after it.
_WH_ELSEWHERE = (
    r"\b(?:welche[rsnm]?|was\s+fur(?:\s+ein(?:e[nrms]?)?)?|quel(?:le)?s?|que|cual(?:es)?|quale|quali|qual|quais"
    r"|welke|welk|wat\s+voor(?:\s+een)?|как(?:ои|ая|ое|ие|ую|им|ого|ом)|котор(?:ыи|ая|ое|ые|ую|ым|ои|ого)"
    r"|jaki(?:e|ego|ej|m|ch)?|jaka|ktor(?:y|a|e|ego|ej|ym|ych)|як(?:ии|а|е|і|у|им|ою|ого|ому)"
    r"|котр(?:ии|а|е|і|у|им|ою|ого))"
)
_ASKS_ELSEWHERE = re.compile(_WH_ELSEWHERE + r"\b")  # "Welcher Editor?" says no German function word
_BEFORE_WH_ELSEWHERE = re.compile(_WH_ELSEWHERE + r"(?:\s+[\w'./+#-]+){0,2}\s+$")
_BEFORE_FOR_ELSEWHERE = re.compile(
    r"\b(?:fur|als|pour|comme|para|como|per|come|voor|для|в\s+качестве|do|jako|як)(?:\s+[\w']+)?\s+$"
)
# One of these is in every question the patterns above read (a substring test before them).
_HINTS = (
    "what", "which", "where", "use", "run", "pick", "chose", "have", "there", "remind", "tell", "prefer",
    "set", "settled", "switch", "moved", "migrated", "went", "go with", "going", "rely", "deploy", "host",
    "written", "coded", "implemented", "built", "programmed", "developed",
)  # fmt: skip


@cache
def _table() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """:data:`_TABLE` read: kind -> (what a question calls it, its tools)."""
    kinds: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for line in _TABLE.replace("\n    ", " ").strip().splitlines():
        kind, _, rest = line.partition(": ")
        names, _, tools = rest.partition(" | ")
        kinds[kind] = (tuple(n.strip() for n in names.split(",")), tuple(t.strip() for t in tools.split(",")))
    return kinds


@cache
def _names_elsewhere() -> dict[str, tuple[str, ...]]:
    """:data:`_TABLE_ELSEWHERE` read: kind -> its names in the other languages."""
    kinds: dict[str, tuple[str, ...]] = {}
    for line in _TABLE_ELSEWHERE.replace("\n    ", " ").strip().splitlines():
        kind, _, names = line.partition(": ")
        kinds[kind] = tuple(n.strip() for n in names.split(","))
    return kinds


@cache
def _names() -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
    """Which kinds each name stands for, and for each first word of a name the most words a name
    that starts with it has. Built on first use, not on import; a dictionary, not one pattern of
    every name: compiling that cost a hook process ~20 ms."""
    kinds_of: dict[str, list[str]] = {}
    named = [(kind, names) for kind, (names, _) in _table().items()] + list(_names_elsewhere().items())
    for kind, names in named:
        for name in names:
            if kind not in kinds_of.setdefault(name, []):
                kinds_of[name].append(kind)
    longest: dict[str, int] = {}
    for name in kinds_of:
        first, *rest = name.split()
        longest[first] = max(longest.get(first, 0), 1 + len(rest))
    return {name: tuple(kinds) for name, kinds in kinds_of.items()}, longest


_AROUND = 120  # characters read either side of a name
_EDGE = 400  # characters read at each end of a long prompt
_NAME_WORD = re.compile(r"[\w'’/-]+")


def _named(folded: str) -> Iterator[tuple[str, int, int]]:
    """The kinds' names ``folded`` says, each with where it starts and ends, the longest at each
    place first ("message queue", not "queue"); a word of a longer one ("cache-warmer") is none."""
    names, longest = _names()
    words = [(m.group(), m.start(), m.end()) for m in _NAME_WORD.finditer(folded)]
    i = 0
    while i < len(words):
        for n in range(min(longest.get(words[i][0], 0), len(words) - i), 0, -1):
            name = " ".join(w for w, _, _ in words[i : i + n])
            if name in names:
                yield name, words[i][1], words[i + n - 1][2]
                i += n
                break
        else:
            i += 1


@cache
def _members(kind: str) -> tuple[str, ...]:
    """A kind's tools as search terms: each name's tokens as the index holds them, one term each
    (a name of several tokens is searched as a phrase, "Fly.io" as "fly io"); names the index holds
    no token of ("C#" holds only "c") are left out."""
    terms: list[str] = []
    for name in _table()[kind][1]:
        tokens = [t for t in fts_tokens(name) if len(t) > 1 or t.isdigit()]
        if not tokens or (len(tokens) == 1 and len(tokens[0]) < 2):
            continue
        term = " ".join(tokens)
        if term not in terms:
            terms.append(term)
    return tuple(terms)


def asked_kinds(query: str) -> list[tuple[str, str]]:
    """The kinds of tool ``query`` asks for, each with the name it called it by, in the order said.

    A kind is asked for when its name follows "what / which …" or a verb of using ("what do we use
    for CI?", "do we have a cache?") in a question, and nothing but the asking follows it; "where do
    we host / deploy / run?" asks for the hosting, "what is it written in?" for the language;
    "where are the secrets stored?" asks for the kind named after "where" (ADR 236).
    """
    if len(query) > 2 * _EDGE:  # a long prompt (a pasted log, code) asks at its start or its end
        query = f"{query[:_EDGE]}\n{query[-_EDGE:]}"
    folded = fold(query)
    asks = _QUESTION.search(folded) is not None
    # Every English form needs a question or "what / which", and one of the hints (substring tests,
    # a few µs); the other languages' forms, a text that may be in one of them.
    english = (asks or "what" in folded or "which" in folded) and any(hint in folded for hint in _HINTS)
    elsewhere = not said_in_english(query) or _ASKS_ELSEWHERE.search(folded) is not None
    if not english and not elsewhere:
        return []
    asks = asks or (elsewhere and "?" in query)
    kinds_of = _names()[0]
    found: list[tuple[str, str]] = []
    for name, start, end in _named(folded):
        # The forms read only a few words either side: a long prompt is not read again for each name.
        before, after = folded[max(0, start - _AROUND) : start], folded[end : end + _AROUND]
        wanted = english and (
            (
                _AFTER_ASKED.match(after) is not None
                and (_BEFORE_WH.search(before) is not None or (asks and _BEFORE_USE.search(before) is not None))
            )
            or (_BEFORE_WHERE.search(before) is not None and _AFTER_WHERE.match(after) is not None)
        )
        if not wanted and elsewhere and asks:
            wanted = _BEFORE_WH_ELSEWHERE.search(before) is not None or _BEFORE_FOR_ELSEWHERE.search(before) is not None
        if wanted:
            found.extend((kind, name) for kind in kinds_of[name] if (kind, name) not in found)
    if asks and _WHERE_HOSTED.search(folded) and not any(kind == "hosting" for kind, _ in found):
        found.append(("hosting", ""))
    written_in = _WRITTEN_IN.search(folded) is not None and re.search(r"\b(?:what|which)\b", folded) is not None
    if written_in and not any(kind == "language" for kind, _ in found):
        found.append(("language", ""))
    return found


def kind_members(query: str, words: list[str], counts: Callable[[list[str]], list[int]]) -> dict[str, tuple[str, ...]]:
    """The tools of the kinds ``query`` asks for that some unit of the bank names, each mapped to
    the query's words (of ``words``, the terms searched) that name the kind.

    ``counts`` gives each term's matches in the bank (the search's capped counts, kept for the rest
    of the search): one statement for the kind's tools, none for a question that asks for no kind.
    A tool the query itself names is not added.
    """
    asked = asked_kinds(query)
    if not asked:
        return {}
    said = set(words)
    stands: dict[str, list[str]] = {}
    for kind, name in asked:
        named = _kind_words(name, words)
        for member in _members(kind):
            if member in said:
                continue
            mapped = stands.setdefault(member, [])
            mapped.extend(w for w in named if w not in mapped)
    if not stands:
        return {}
    members = list(stands)
    said_by = {m: n for m, n in zip(members, counts(members), strict=True) if n > 0}
    # The tools the bank names most: a year of sessions may name many databases, and each one
    # searched is one more phrase for bm25 to rank.
    kept = set(sorted(said_by, key=lambda m: -said_by[m])[:MAX_TOOLS])  # stable: equals in the table's order
    return {m: tuple(stands[m]) for m in members if m in kept}


def _kind_words(name: str, words: list[str]) -> list[str]:
    """The terms of ``words`` that the kind's ``name`` (as the query said it) is made of, or that
    stand for one of its words ("ci" for "continuous integration", ADR 197)."""
    if not name:
        return []
    parts = set(query_terms(name))
    parts |= {form for part in list(parts) for form in counterparts(part)}
    stems = {term_key(p) for p in parts}
    return [w for w in words if w in parts or term_key(w) in stems]


def kind_words_named(text: str, tools: dict[str, tuple[str, ...]]) -> str:
    """The kinds' words (of ``tools``, as :func:`kind_members` gives them) that ``text`` stands for
    by naming one of their tools, as one string: "Let's drop Redis, Memcached from now on" is about
    the cache its question asked for, as much as "The cache is Redis." is. ``''`` when it names none."""
    if not tools:
        return ""
    said = content_stems(text)
    return " ".join(dict.fromkeys(w for tool, words in tools.items() if set(term_key(tool)) <= said for w in words))
