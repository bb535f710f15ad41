FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY service ./service
COPY connectors ./connectors
COPY migrations ./migrations
RUN pip install --no-cache-dir '.[postgres]'
ENV DIGEST_HOST=0.0.0.0 DIGEST_PORT=8000 DIGEST_DATA_DIR=/data
EXPOSE 8000
CMD ["digest", "serve"]
