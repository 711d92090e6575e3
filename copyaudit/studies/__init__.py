"""The studies the workbench audits: one StudySpec per study in one STUDIES registry."""
