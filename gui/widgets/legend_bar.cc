#include "widgets/legend_bar.h"

#include <QHBoxLayout>
#include <QLabel>

#include "core/category.h"

namespace hvdview {

LegendBar::LegendBar(QWidget* parent) : QWidget(parent) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 0, 4, 0);
  layout->setSpacing(10);
  for (int i = 0; i < kCategoryCount; ++i) {
    const auto category = static_cast<Category>(i);
    auto* swatch = new QLabel(this);
    swatch->setFixedSize(14, 14);
    swatch->setStyleSheet(QStringLiteral("background-color: #%1; border: 1px solid #555;")
                              .arg(CategoryColor(category), 6, 16, QLatin1Char('0')));
    layout->addWidget(swatch);
    layout->addWidget(new QLabel(QString::fromLatin1(CategoryLabel(category)), this));
  }
  layout->addStretch(1);
}

}  // namespace hvdview
