#include "widgets/image_export.h"

#include <QFileInfo>
#include <QPainter>
#include <QPixmap>
#include <QSvgGenerator>

namespace hvdview {

bool ExportWidget(QWidget* widget, const QString& path, QString* error) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == QLatin1String("png")) {
    if (!widget->grab().save(path, "PNG")) {
      *error = QStringLiteral("cannot write %1").arg(path);
      return false;
    }
    return true;
  }
  if (suffix == QLatin1String("svg")) {
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(widget->size());
    generator.setViewBox(QRect(QPoint(0, 0), widget->size()));
    generator.setTitle(QStringLiteral("hvdview export"));
    QPainter painter;
    if (!painter.begin(&generator)) {
      *error = QStringLiteral("cannot write %1").arg(path);
      return false;
    }
    widget->render(&painter);
    painter.end();
    return true;
  }
  *error = QStringLiteral("%1: unsupported image format '%2' (use .png or .svg)").arg(path, suffix);
  return false;
}

}  // namespace hvdview
