# The trustnode node image: API node, provider worker, auditor daemons and the deploy step.
# The compiled contract artifacts ship inside the package, so no Solidity compiler (and no C
# compiler: every dependency has a manylinux wheel) is needed at build or run time.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install . \
    && useradd --create-home --uid 10001 trustnode \
    && mkdir -p /data /shared \
    && chown trustnode:trustnode /data /shared

USER trustnode
# State (queues, votes, keys, caches) lives in /data; /shared holds the deployment file.
ENV TRUSTNODE_DATA_DIR=/data \
    TRUSTNODE_LOG_JSON=true
VOLUME ["/data"]
EXPOSE 8080

CMD ["trustnode", "--help"]
