// Package deploy holds Herald's operations kit, which is not Go: a
// Grafana dashboard (grafana-dashboard.json) and Prometheus alerting rules
// (prometheus-alerts.yml), the container image (image/), the systemd unit
// (systemd/), the Helm chart (helm/, tested from the tools/ module) and
// the release configuration (release/). Its tests check the dashboard and
// the rules against the metrics a running node exposes, the unit against
// Herald's shutdown bound and systemd-analyze, and a built image from its
// mounted root filesystem.
package deploy
