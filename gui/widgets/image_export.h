// Export of any widget (timeline, chart) to PNG or SVG.
#pragma once

#include <QString>
#include <QWidget>

namespace hvdview {

// Renders `widget` into `path`; the format follows the extension (.png or .svg).
// Returns false and sets `error` when the extension is unknown or the file cannot be written.
bool ExportWidget(QWidget* widget, const QString& path, QString* error);

}  // namespace hvdview
