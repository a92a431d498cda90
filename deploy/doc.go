// Package deploy holds Herald's operations kit, which is not Go: a
// Grafana dashboard (grafana-dashboard.json) and Prometheus alerting rules
// (prometheus-alerts.yml). Its tests check both against the metrics a
// running node exposes.
package deploy
