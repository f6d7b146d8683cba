{{- define "cordon.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "cordon.labels" -}}
app.kubernetes.io/name: cordon
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "cordon.selector" -}}
app.kubernetes.io/name: cordon
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "cordon.gatewaySelector" -}}
app.kubernetes.io/name: cordon
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: gateway
{{- end -}}

{{- define "cordon.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "cordon.secretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-tokens" (include "cordon.fullname" .)) -}}
{{- end -}}

{{/* What PodSecurity "restricted" asks of every container. */}}
{{- define "cordon.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "cordon.headless" -}}
{{ include "cordon.fullname" . }}-headless
{{- end -}}
