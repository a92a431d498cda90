{{/* The release's resource name: the release name, with "herald" unless it holds it. */}}
{{- define "herald.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "herald.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "herald.labels" -}}
{{ include "herald.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "herald.secretName" -}}
{{- default (include "herald.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{/*
herald.config is the node's herald.yaml: .Values.config with the address,
engine and shutdown the chart manages laid over it.
*/}}
{{- define "herald.config" -}}
{{- $v := .Values -}}
{{- $cfg := deepCopy (default dict $v.config) -}}
{{- $_ := set $cfg "address" (printf ":%d" (int $v.port)) -}}
{{- $engine := dict "type" $v.engine.type -}}
{{- if eq $v.engine.type "postgres" -}}
{{- $_ := set $engine "postgres" (dict "schema" $v.engine.postgres.schema "pool_size" (int $v.engine.postgres.poolSize) "query_pool_size" (int $v.engine.postgres.queryPoolSize)) -}}
{{- else if eq $v.engine.type "redis" -}}
{{- $r := $v.engine.redis -}}
{{- $redis := dict "db" (int $r.db) "prefix" $r.prefix -}}
{{- if $r.addresses -}}
{{- $_ := set $redis "addresses" $r.addresses -}}
{{- if $r.sentinelMaster }}{{ $_ := set $redis "sentinel_master" $r.sentinelMaster }}{{ end -}}
{{- if $r.cluster }}{{ $_ := set $redis "cluster" true }}{{ end -}}
{{- else -}}
{{- $_ := set $redis "address" $r.address -}}
{{- end -}}
{{- $_ := set $engine "redis" $redis -}}
{{- else if eq $v.engine.type "nats" -}}
{{- $_ := set $engine "nats" (dict "url" $v.engine.nats.url "prefix" $v.engine.nats.prefix) -}}
{{- else if ne $v.engine.type "memory" -}}
{{- fail (printf "engine.type %q: want memory, postgres, redis or nats" $v.engine.type) -}}
{{- end -}}
{{- $_ := set $cfg "engine" $engine -}}
{{- if $v.tls.secretName -}}
{{- $_ := set $cfg "tls" (dict "cert_file" "/etc/herald-tls/tls.crt" "key_file" "/etc/herald-tls/tls.key") -}}
{{- end -}}
{{- if $v.tracing.enabled -}}
{{- $_ := set $cfg "opentelemetry" (dict "enabled" true) -}}
{{- end -}}
{{- $_ := set $cfg "shutdown" (dict "drain_window" (printf "%ds" (int $v.shutdown.drainWindowSeconds)) "timeout" (printf "%ds" (int $v.shutdown.timeoutSeconds))) -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* herald.checks fails the render on values Herald would refuse or that break a cluster. */}}
{{- define "herald.checks" -}}
{{- if and (eq .Values.engine.type "memory") (or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled) -}}
{{- fail "engine.type memory keeps everything in one process: set replicaCount: 1 and autoscaling.enabled: false, or use postgres, redis or nats" -}}
{{- end -}}
{{- if ge (int .Values.shutdown.drainWindowSeconds) (int .Values.shutdown.timeoutSeconds) -}}
{{- fail "shutdown.drainWindowSeconds must be shorter than shutdown.timeoutSeconds (Herald refuses it too)" -}}
{{- end -}}
{{- if and (not .Values.existingSecret) (not .Values.secrets.hmacSecretKey) (not .Values.secrets.apiKey) -}}
{{- fail "set secrets.hmacSecretKey and secrets.apiKey (or existingSecret): without keys Herald refuses every client" -}}
{{- end -}}
{{- if and (eq .Values.engine.type "postgres") (not .Values.existingSecret) (not .Values.secrets.postgresDSN) -}}
{{- fail "engine.type postgres needs secrets.postgresDSN (or existingSecret with the key postgres-dsn)" -}}
{{- end -}}
{{- end -}}
