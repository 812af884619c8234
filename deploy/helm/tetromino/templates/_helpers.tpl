{{/* Names and labels. */}}
{{- define "tetromino.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{- define "tetromino.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "tetromino.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "tetromino.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{- define "tetromino.secretName" -}}
{{- .Values.database.existingSecret | default (printf "%s-database" (include "tetromino.fullname" .)) -}}
{{- end -}}

{{/* The database settings every referee container reads from the Secret. */}}
{{- define "tetromino.databaseEnv" -}}
- name: ARENA_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "tetromino.secretName" . }}
      key: ARENA_DATABASE_URL
- name: PGPASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "tetromino.secretName" . }}
      key: PGPASSWORD
      optional: true
{{- end -}}

{{/* The pod-level settings the bot sandbox needs (deploy/README.md). */}}
{{- define "tetromino.podSecurity" -}}
hostUsers: {{ .Values.sandbox.hostUsers }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
  seccompProfile:
    type: Localhost
    localhostProfile: {{ .Values.sandbox.seccompLocalhostProfile }}
  {{- if .Values.sandbox.appArmorUnconfined }}
  appArmorProfile:
    type: Unconfined
  {{- end }}
{{- end -}}

{{/* The container-level settings: nothing beyond what an unprivileged bwrap needs. */}}
{{- define "tetromino.containerSecurity" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
  {{- if and (not .Values.sandbox.hostUsers) .Values.sandbox.procMountUnmasked }}
  procMount: Unmasked
  {{- end }}
{{- end -}}

{{/* Each launched bot's per-game copy, scratch and token live in /tmp. */}}
{{- define "tetromino.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: 1Gi
{{- end -}}

{{- define "tetromino.metricsAnnotations" -}}
{{- if .Values.metrics.annotations -}}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .Values.metrics.port | quote }}
prometheus.io/path: /metrics
{{- end -}}
{{- end -}}
