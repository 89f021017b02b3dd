# The image `nodename-lint webhook manifests` names (docs/webhook.md): nodename-lint on a slim Python,
# run as an unprivileged user with a read-only root file system.
#   docker build -t IMAGE . && nodename-lint webhook manifests --image IMAGE | kubectl apply -f -
FROM python:3.12-slim
COPY . /src
RUN pip install --no-cache-dir /src && rm -rf /src
USER 65532:65532
ENTRYPOINT ["nodename-lint"]
CMD ["webhook", "--help"]
